package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// waitHealthy waits until c answers on its health URL (containerd: its API), failing
// early with the end of its log when its process is gone.
func (cl *Cluster) waitHealthy(ctx context.Context, c component) error {
	client, err := healthClient(cl.Options)
	if err != nil {
		return err
	}
	check := func() error {
		if c.health == "" {
			_, err := cl.ctr(ctx, "version")
			return err
		}
		resp, err := client.Get(c.health)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", c.health, resp.Status)
		}
		return nil
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if running(cl.Options, c) == 0 {
			return fmt.Errorf("%s exited:\n%s", c.name, tail(cl.logFile(c.name), 15))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s is not healthy after 90s (%v):\n%s", c.name, err, tail(cl.logFile(c.name), 15))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// healthClient trusts the cluster's CA and presents the admin certificate (the API
// server's /readyz needs a user); the controller manager's and the scheduler's own
// serving certificates are self-signed, so it skips verification for them only.
func healthClient(o Options) (*http.Client, error) {
	ca, err := os.ReadFile(o.pki("ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	pair, err := tls.LoadX509KeyPair(o.pki("admin.crt"), o.pki("admin.key"))
	if err != nil {
		return nil, err
	}
	apiHost := fmt.Sprintf("%s:%d", o.NodeIP, o.APIPort)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}}
	selfSigned := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // self-signed health endpoints on the node address
	return &http.Client{Timeout: 5 * time.Second, Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Scheme == "https" && r.URL.Host != apiHost {
			return selfSigned.RoundTrip(r)
		}
		return tr.RoundTrip(r)
	})}, nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// waitNodeReady waits until the node is Ready, as reported by a kubelet heartbeat at or
// after since (a restarted cluster's Node still says what the last kubelet reported).
func waitNodeReady(ctx context.Context, o Options, since time.Time, timeout time.Duration) error {
	since = since.Truncate(time.Second) // heartbeats have a resolution of seconds
	cs, err := clientset(o)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	last := "not registered"
	for time.Now().Before(deadline) {
		node, err := cs.CoreV1().Nodes().Get(ctx, o.NodeName, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && !c.LastHeartbeatTime.Time.Before(since) {
					if c.Status == corev1.ConditionTrue {
						return nil
					}
					last = fmt.Sprintf("%s: %s", c.Reason, c.Message)
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("node %s is not Ready after %s (%s):\n%s", o.NodeName, timeout, last, tail(o.logFile("kubelet"), 15))
}

// clientset is an admin client of the cluster.
func clientset(o Options) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig())
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ctr runs containerd's client against the cluster's containerd, in the CRI's namespace.
func (cl *Cluster) ctr(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", cl.socket(), "--namespace", "k8s.io"}, args...)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("ctr %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out.String(), nil
}

// ImportImage imports an image tarball (docker or OCI) into the node's containerd, where
// pods find it without pulling (`ctr -n k8s.io images import`).
func (cl *Cluster) ImportImage(ctx context.Context, tarball string) error {
	_, err := cl.ctr(ctx, "images", "import", "--digests", tarball)
	return err
}

// HasLabeledImage says whether the node's containerd holds ref (as containerd names it,
// e.g. docker.io/library/terraplane:dev) with the label key=value.
func (cl *Cluster) HasLabeledImage(ctx context.Context, ref, key, value string) (bool, error) {
	out, err := cl.ctr(ctx, "images", "ls", "-q", fmt.Sprintf("name==%s,labels.%q==%s", ref, key, value))
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(out) == ref, nil
}

// LabelImage sets the label key=value on the node's image ref.
func (cl *Cluster) LabelImage(ctx context.Context, ref, key, value string) error {
	_, err := cl.ctr(ctx, "images", "label", ref, key+"="+value)
	return err
}

// HasImage says whether the node's containerd holds ref.
func (cl *Cluster) HasImage(ctx context.Context, ref string) (bool, error) {
	out, err := cl.ctr(ctx, "images", "ls", "-q")
	if err != nil {
		return false, err
	}
	for _, l := range strings.Fields(out) {
		if l == ref {
			return true, nil
		}
	}
	return false, nil
}
