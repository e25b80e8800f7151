package sharding

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

// cuttable forwards TCP connections to an address until cut, as a network between a
// replica and the API server that can fail.
type cuttable struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
}

func newCuttable(t *testing.T, target string) *cuttable {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cuttable{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go c.serve()
	return c
}

func (c *cuttable) serve() {
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		if c.cut {
			c.mu.Unlock()
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", c.target)
		if err != nil {
			c.mu.Unlock()
			in.Close()
			continue
		}
		c.conns = append(c.conns, in, out)
		c.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); out.Close() }()
		go func() { _, _ = io.Copy(in, out); in.Close() }()
	}
}

// setCut cuts every connection and refuses new ones (true), or lets them through again.
func (c *cuttable) setCut(cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = cut
	if cut {
		for _, conn := range c.conns {
			conn.Close()
		}
		c.conns = nil
	}
}

// kubeconfigThrough writes a copy of the admin kubeconfig whose server is addr.
func kubeconfigThrough(t *testing.T, addr, path string) string {
	cfg, err := clientcmd.LoadFromFile(env.ControlPlane.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, cluster := range cfg.Clusters {
		u, err := url.Parse(cluster.Server)
		if err != nil {
			t.Fatal(err)
		}
		u.Host = addr
		cluster.Server = u.String()
	}
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPartitionedReplica: a sharded replica is cut off from the API server while its
// slow creates run (its terraform still reaches the state). The other replica takes its
// shards over but applies none of its workspaces while a run of the cut-off one is
// still going: no workspace is ever applied by two terraform processes at once.
func TestPartitionedReplica(t *testing.T) {
	ctx := context.Background()
	const partNS = "partition"
	dir := t.TempDir()
	for _, n := range []string{partNS, systemNS} {
		if err := env.Namespace(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: partNS, Name: "span-module"}, Data: map[string]string{"main.tf": spanModule}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	api, err := url.Parse(env.ControlPlane.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	link := newCuttable(t, api.Host)
	logs := []string{filepath.Join(dir, "cut-off.log"), filepath.Join(dir, "other.log")}
	flags := []string{"--debug", "--shards", "4", "--shard-lease-duration", "6s", "--leader-election-namespace", systemNS, "--user-error-retry", "2s"}
	cutOff, err := env.StartController(bin, filepath.Join(dir, "work-a"), logs[0], append(flags, "--shard-identity", "cut-off",
		"--kubeconfig", kubeconfigThrough(t, link.ln.Addr().String(), filepath.Join(dir, "through.kubeconfig")))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cutOff.Stop()
	other, err := env.StartController(bin, filepath.Join(dir, "work-b"), logs[1], append(flags, "--shard-identity", "other")...)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	time.Sleep(8 * time.Second) // both hold their shares

	const modules = 8
	ledger := filepath.Join(dir, "ledger")
	for i := range modules {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: partNS, Name: fmt.Sprintf("p%d", i)}}
		m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "span-module"}}
		m.Spec.ReclaimPolicy = common.ReclaimDelete
		m.Spec.ForProvider = &apiextensionsv1.JSON{Raw: fmt.Appendf(nil, `{"name":%q,"ledger":%q,"sleep":12}`, m.Name, ledger)}
		if err := env.Client.Create(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(readFile(ledger), "begin") && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	link.setCut(true)
	t.Log("cut the replica off the API server while its creates run")
	time.Sleep(40 * time.Second) // its shard Leases expire; the other replica takes them
	link.setCut(false)
	deadline = time.Now().Add(5 * time.Minute)
	for pending := settleInterrupted(t, partNS); len(pending) > 0; pending = settleInterrupted(t, partNS) {
		if time.Now().After(deadline) {
			for _, path := range logs {
				t.Logf("%s:\n%s", filepath.Base(path), tail(readFile(path), 15))
			}
			t.Fatalf("%d Modules not Ready: %s", len(pending), strings.Join(pending, "; "))
		}
		time.Sleep(time.Second)
	}
	overlaps, runs := applyOverlaps(t, logs)
	t.Logf("FIGURES partitioned replica: %d applies, %d of one workspace at once by the two replicas", runs, overlaps)
	if runs < modules {
		t.Errorf("%d applies in the logs, want at least %d", runs, modules)
	}
	if overlaps > 0 {
		t.Errorf("%d times two replicas applied one workspace at once", overlaps)
	}
}

// settleInterrupted lists the Modules of namespace not Ready, answering create-again
// (as a user would) for those whose interrupted create stopped at CreateInterrupted.
func settleInterrupted(t *testing.T, namespace string) []string {
	var list terraformv1.ModuleList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(namespace)); err != nil {
		t.Fatal(err)
	}
	var pending []string
	for i := range list.Items {
		m := &list.Items[i]
		if framework.Condition(m.Status.Conditions, common.TypeReady).Status == metav1.ConditionTrue {
			continue
		}
		synced := framework.Condition(m.Status.Conditions, common.TypeSynced)
		pending = append(pending, fmt.Sprintf("%s: %s %s", m.Name, synced.Reason, synced.Message))
		if framework.Condition(m.Status.Conditions, common.TypeSynced).Reason == common.ReasonCreateInterrupted && m.Annotations[common.CreateAgainAnnotation] == "" {
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations[common.CreateAgainAnnotation] = "true"
			_ = env.Client.Update(context.Background(), m)
		}
	}
	return pending
}

// applyOverlaps reads the terraform applies from the replicas' logs (each with its start
// and duration) and counts the pairs of applies of one workspace that overlap in time.
func applyOverlaps(t *testing.T, logs []string) (overlaps, runs int) {
	type span struct{ from, to time.Time }
	byResource := map[string][]span{}
	for _, path := range logs {
		err := framework.LogLines(path, func(line map[string]any) {
			if line["msg"] != "terraform ran" || line["verb"] != "apply" {
				return
			}
			start, err1 := time.Parse(time.RFC3339Nano, fmt.Sprint(line["started"]))
			took, err2 := time.ParseDuration(fmt.Sprint(line["duration"]))
			if err1 != nil || err2 != nil {
				t.Errorf("unreadable run in %s: %v", path, line)
				return
			}
			name := fmt.Sprint(line["resource"])
			byResource[name] = append(byResource[name], span{start, start.Add(took)})
			runs++
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	for _, spans := range byResource {
		sort.Slice(spans, func(i, j int) bool { return spans[i].from.Before(spans[j].from) })
		for i := 1; i < len(spans); i++ {
			if spans[i].from.Before(spans[i-1].to) {
				overlaps++
			}
		}
	}
	return overlaps, runs
}

// tail is the last n lines of text.
func tail(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
