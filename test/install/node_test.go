package install

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/cluster"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/image"
	"terraplane.io/terraplane/internal/kinds"
)

// nodeImage is the image the node tests build (terraplane, OpenTofu and the aws provider)
// and import into the node; pods name it as the chart does, repository:tag.
const nodeImageRepo, nodeImageTag = "terraplane", "node-test"

// nodeEnv is the real one-node cluster (internal/cluster, what make cluster runs) that the
// node tests share: started by the first test that needs it, with no objects, and
// stopped by TestMain.
type nodeEnv struct {
	*cluster.Cluster
	// Client and Clientset are admin clients.
	Client    client.Client
	Clientset kubernetes.Interface
}

var theNode struct {
	once    sync.Once
	env     *nodeEnv
	err     error
	started bool
}

// node returns the shared cluster with the test image imported, starting it on first use.
func node(t *testing.T) *nodeEnv {
	t.Helper()
	theNode.once.Do(func() { theNode.env, theNode.err = startNode(t) })
	if theNode.err != nil {
		t.Fatal(theNode.err)
	}
	return theNode.env
}

// nodeOptions are the test cluster's: its own directory, which keeps containerd's images
// between runs, and an empty etcd each time.
func nodeOptions() (cluster.Options, error) {
	return cluster.Options{Dir: "../../.terraplane/cluster-test", Fresh: true}.Defaults(devenv.CacheDir())
}

func startNode(t *testing.T) (*nodeEnv, error) {
	o, err := nodeOptions()
	if err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("the node tests run a kubelet, containerd and runc, which need root (CI runs as root)")
	}
	if err := cluster.Stop(o, os.Stderr); err != nil { // what a killed test run left
		return nil, err
	}
	ctx := context.Background()
	start := time.Now()
	theNode.started = true
	c, err := cluster.Start(ctx, o, testWriter{t})
	if err != nil {
		return nil, fmt.Errorf("start the cluster: %w", err)
	}
	t.Logf("cluster: node Ready in %s", time.Since(start).Round(100*time.Millisecond))
	if err := buildAndImport(t, ctx, c); err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig())
	if err != nil {
		return nil, err
	}
	cl, err := client.New(cfg, client.Options{Scheme: kinds.NewScheme()})
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &nodeEnv{Cluster: c, Client: cl, Clientset: cs}, nil
}

// stopNode stops the shared cluster if a test started it.
func stopNode() {
	if !theNode.started {
		return
	}
	o, err := nodeOptions()
	if err == nil {
		err = cluster.Stop(o, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "install: stop the cluster:", err)
	}
}

// buildAndImport builds the default image as make image PROVIDERS=aws does for this
// machine's platform (OpenTofu, and the aws provider from OpenTofu's tree of the mirror),
// writes its tarball as make image does and imports that into the node's containerd,
// unless the node holds one built from the same files (the test cluster keeps
// containerd's images between runs).
func buildAndImport(t *testing.T, ctx context.Context, c *cluster.Cluster) error {
	tofu := filepath.Join(devenv.BinDir(), "tofu")
	if _, err := os.Stat(tofu); err != nil {
		return fmt.Errorf("OpenTofu is not in %s (make tools-test builds it)", devenv.BinDir())
	}
	providers, err := filepath.Glob(filepath.Join(devenv.PluginMirror(), "registry.opentofu.org", "*", "aws", "*", "linux_amd64", "*"))
	if err != nil || len(providers) == 0 {
		return fmt.Errorf("the aws provider is not in %s (make tools puts it there)", devenv.PluginMirror())
	}
	inputs, err := hashFiles(append([]string{terraplaneBinary(t), tofu, "/etc/ssl/certs/ca-certificates.crt"}, providers...)...)
	if err != nil {
		return err
	}
	const ref, label = "docker.io/library/" + nodeImageRepo + ":" + nodeImageTag, "io.terraplane.test.inputs"
	if have, err := c.HasLabeledImage(ctx, ref, label, inputs); err != nil || have {
		t.Logf("image: the node holds %s built from the same files", ref)
		return err
	}
	work, err := os.MkdirTemp("", "terraplane-node-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	start := time.Now()
	img, err := image.Build(image.Options{Terraplane: terraplaneBinary(t), Terraform: tofu, CACerts: "/etc/ssl/certs/ca-certificates.crt",
		ProviderMirror: devenv.PluginMirror(), Providers: []string{"aws"}, Scratch: work})
	if err != nil {
		return fmt.Errorf("build the image (the provider mirror comes from `make tools`): %w", err)
	}
	idx, err := image.Index(img)
	if err != nil {
		return err
	}
	layout, tarball := filepath.Join(work, "oci"), filepath.Join(work, "terraplane.tar")
	if err := image.WriteIndexLayout(idx, layout, nodeImageRepo+":"+nodeImageTag); err != nil {
		return err
	}
	if err := image.WriteArchive(layout, tarball, nodeImageRepo+":"+nodeImageTag, v1.Platform{}); err != nil {
		return err
	}
	built := time.Since(start)
	if err := c.ImportImage(ctx, tarball); err != nil {
		return err
	}
	t.Logf("image: built in %s, imported in %s", built.Round(100*time.Millisecond), (time.Since(start) - built).Round(100*time.Millisecond))
	return c.LabelImage(ctx, ref, label, inputs)
}

// hashFiles is a SHA-256 over the files' contents.
func hashFiles(paths ...string) (string, error) {
	h := sha256.New()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// testWriter logs what is written to it.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// podDone waits until a pod has ended and returns its phase and its log.
func (n *nodeEnv) podDone(g Gomega, ctx context.Context, ns, name string) (corev1.PodPhase, string) {
	pod := &corev1.Pod{}
	g.Eventually(func() corev1.PodPhase {
		g.Expect(n.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
		return pod.Status.Phase
	}).WithTimeout(3*time.Minute).WithPolling(time.Second).Should(BeElementOf(corev1.PodSucceeded, corev1.PodFailed),
		"pod %s/%s ends", ns, name)
	raw, err := n.Clientset.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	return pod.Status.Phase, string(raw)
}

// restrictedPod is a pod of the test image that the restricted Pod Security level admits.
func restrictedPod(ns, name, sa string, args ...string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{
		RestartPolicy:      corev1.RestartPolicyNever,
		ServiceAccountName: sa,
		SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: ptrTo(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{Name: "terraplane", Image: nodeImageRepo + ":" + nodeImageTag, ImagePullPolicy: corev1.PullNever, Args: args,
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptrTo(false), ReadOnlyRootFilesystem: ptrTo(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			// as in the chart: the root file system is read-only, /tmp is not
			VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}}}},
		Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}}
}

func ptrTo[T any](v T) *T { return &v }
