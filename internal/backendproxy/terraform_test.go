package backendproxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/statelock"
)

// others is how many other workspaces' states share the namespace.
const others = 300

// TestStateReadsByName: terraform 1.11's kubernetes backend, with 300 other states in its
// namespace, makes the API server go through all of them for every state read when it
// talks to the API server itself, and through about one when it talks through the
// proxy; the apply still writes its state. With its state held by the proxy, as during
// a run under the engine's lock, the API server answers one read of it at most.
func TestStateReadsByName(t *testing.T) {
	tf, dir, cp, cs := startStates(t)
	ctx := context.Background()
	for i := range others {
		suffix := fmt.Sprintf("other%d", i)
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tfstate-default-" + suffix, Namespace: "states",
			Labels: map[string]string{stateLabel: "true", suffixLabel: suffix, workspaceLabel: "default"}}}
		if _, err := cs.CoreV1().Secrets("states").Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Start(cp.Config, filepath.Join(dir, "proxy"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	reads := map[string]float64{} // each side's reads of Secrets for its apply
	for _, side := range []struct {
		name, kubeconfig string
		atLeast, atMost  float64 // Secrets gone through for the apply's state reads
		held             bool    // the state held by the proxy during the apply
	}{
		{name: "direct", kubeconfig: cp.Kubeconfig, atLeast: others},
		{name: "proxied", kubeconfig: p.Kubeconfig(), atMost: 10},
		{name: "held", kubeconfig: p.Kubeconfig(), atMost: 10, held: true},
	} {
		t.Run(side.name, func(t *testing.T) {
			work := filepath.Join(dir, side.name)
			config := `terraform {
  backend "kubernetes" {
    namespace     = "states"
    secret_suffix = "` + side.name + `"
  }
}
resource "terraform_data" "this" { input = "` + side.name + `" }
`
			if err := os.MkdirAll(work, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(config), 0o600); err != nil {
				t.Fatal(err)
			}
			run := func(args ...string) string {
				cmd := exec.Command(tf, args...)
				cmd.Dir = work
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "KUBE_CONFIG_PATH=" + side.kubeconfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
				}
				return string(out)
			}
			run("init", "-input=false", "-no-color")
			run("apply", "-auto-approve", "-input=false", "-no-color") // the state's first write
			before, readsBefore := fetchedSecrets(t, cs), secretReads(t, cs)
			if side.held {
				defer p.Hold("states", "tfstate-default-"+side.name, nil)()
			}
			run("apply", "-auto-approve", "-input=false", "-no-color", "-replace=terraform_data.this")
			went := fetchedSecrets(t, cs) - before
			reads[side.name] = secretReads(t, cs) - readsBefore
			t.Logf("%s: the API server answered %.0f reads of Secrets for the apply", side.name, reads[side.name])
			t.Logf("%s: the API server went through %.0f Secrets for the apply", side.name, went)
			if went < side.atLeast || side.atMost > 0 && went > side.atMost {
				t.Errorf("went through %.0f Secrets, want at least %.0f and at most %.0f", went, side.atLeast, side.atMost)
			}
			s, err := cs.CoreV1().Secrets("states").Get(ctx, "tfstate-default-"+side.name, metav1.GetOptions{})
			if err != nil || len(s.Data["tfstate"]) == 0 {
				t.Fatalf("the apply's state: %v, %d bytes", err, len(s.Data["tfstate"]))
			}
			if side.held {
				// a second run reads the state the first wrote: the proxy kept its write
				run("apply", "-auto-approve", "-input=false", "-no-color", "-replace=terraform_data.this")
				if reads[side.name] > 1 || reads[side.name] >= reads["proxied"] {
					t.Errorf("the held apply had the API server answer %.0f reads of Secrets, against %.0f unheld; want at most 1", reads[side.name], reads["proxied"])
				}
				if out := run("state", "list"); !strings.Contains(out, "terraform_data.this") {
					t.Errorf("the state after a held apply: %s", out)
				}
			}
		})
	}
}

// TestFirstApplyOnTheLocksState: the engine's first apply of a workspace runs on the
// empty state its lock wrote in the same request, and terraform's reads of that state
// are all answered from what the lock wrote: the API server answers none of them, and
// the apply still writes its state over the seed. The lock is then released as the
// proxy last saw the state, without reading it again.
func TestFirstApplyOnTheLocksState(t *testing.T) {
	tf, dir, cp, cs := startStates(t)
	ctx := context.Background()
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := Start(cp.Config, filepath.Join(dir, "proxy"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	config := `terraform {
  backend "kubernetes" {
    namespace     = "states"
    secret_suffix = "seeded"
  }
}
resource "terraform_data" "this" { input = "seeded" }
`
	if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		cmd := exec.Command(tf, args...)
		cmd.Dir = work
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "KUBE_CONFIG_PATH=" + p.Kubeconfig(), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
		}
		return string(out)
	}
	backend := map[string]string{"namespace": "states", "secret_suffix": "seeded"}
	locker := statelock.NewLocker(c, c, time.Hour, time.Minute)
	if err := locker.SeedState(ctx, backend); err != nil { // as the engine does before an init
		t.Fatal(err)
	}
	run("init", "-input=false", "-no-color")
	// as a workspace whose init was copied from another of the same module: no state yet
	if err := c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "states", Name: "tfstate-default-seeded"}}); err != nil {
		t.Fatal(err)
	}

	unlock, seeded, err := locker.LockState(ctx, backend, "apply", true)
	if err != nil {
		t.Fatal(err)
	}
	if seeded == nil {
		t.Fatal("the first lock of a workspace without state said nothing of the state it wrote")
	}
	before := secretReads(t, cs)
	release := p.Hold("states", "tfstate-default-seeded", seeded)
	run("apply", "-auto-approve", "-input=false", "-no-color", "-lock=false")
	last := release()
	reads := secretReads(t, cs) - before
	if reads != 0 {
		t.Errorf("the API server answered %.0f reads of the state for the first apply, want none", reads)
	}
	before = secretReads(t, cs)
	unlock(true, last)
	if reads := secretReads(t, cs) - before; reads != 0 {
		t.Errorf("the API server answered %.0f reads of the state to release its lock, want none: the proxy saw terraform's write", reads)
	}
	if rec, err := statelock.ReadLock(ctx, c, statelock.LeaseKey("states", "seeded")); err != nil || rec.Holder != nil || rec.CreatePending {
		t.Errorf("the lock after its release: %+v, %v; want it free, the create settled", rec, err)
	}
	if out := run("state", "list"); !strings.Contains(out, "terraform_data.this") {
		t.Errorf("the state after the first apply: %s", out)
	}
	if _, seeded, err := locker.LockState(ctx, backend, "apply", false); err != nil || seeded != nil {
		t.Errorf("a lock on a workspace with a state: seeded %q, err %v; want nothing written", seeded, err)
	}
}

// startStates finds terraform and starts a control plane, stopped when t ends, with the
// namespace "states"; dir is t's directory.
func startStates(t *testing.T) (tf, dir string, cp *devenv.ControlPlane, cs *kubernetes.Clientset) {
	t.Helper()
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("terraform is not on PATH: install terraform 1.11 (the image ships it)")
	}
	dir = t.TempDir()
	cp, err = devenv.StartControlPlane(filepath.Join(dir, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cp.Stop)
	cs = kubernetes.NewForConfigOrDie(cp.Config)
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "states"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return tf, dir, cp, cs
}

// secretReads is how many GETs and LISTs of Secrets the API server has answered.
func secretReads(t *testing.T, cs *kubernetes.Clientset) float64 {
	t.Helper()
	return sumMetric(t, cs, "apiserver_request_total{", func(line string) bool {
		return strings.Contains(line, `resource="secrets"`) && (strings.Contains(line, `verb="GET"`) || strings.Contains(line, `verb="LIST"`))
	})
}

// fetchedSecrets is how many Secrets the API server has gone through to answer LISTs.
func fetchedSecrets(t *testing.T, cs *kubernetes.Clientset) float64 {
	t.Helper()
	return sumMetric(t, cs, "apiserver_storage_list_fetched_objects_total{", func(line string) bool {
		return strings.Contains(line, `resource="secrets"`)
	})
}

// sumMetric is the sum of the API server's metric lines that start with prefix and that
// match says to count.
func sumMetric(t *testing.T, cs *kubernetes.Clientset, prefix string, match func(string) bool) float64 {
	t.Helper()
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, prefix) || !match(line) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	return sum
}
