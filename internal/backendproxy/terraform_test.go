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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"terraplane.io/terraplane/internal/devenv"
)

// others is how many other workspaces' states share the namespace.
const others = 300

// TestStateReadsByName: terraform 1.11's kubernetes backend, with 300 other states in its
// namespace, makes the API server go through all of them for every state read when it
// talks to the API server itself, and through about one when it talks through the
// proxy; the apply still writes its state.
func TestStateReadsByName(t *testing.T) {
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("terraform is not on PATH: install terraform 1.11 (the image ships it)")
	}
	dir := t.TempDir()
	cp, err := devenv.StartControlPlane(filepath.Join(dir, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(cp.Config)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "states"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
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

	for _, side := range []struct {
		name, kubeconfig string
		atLeast, atMost  float64 // Secrets gone through for the apply's state reads
	}{
		{name: "direct", kubeconfig: cp.Kubeconfig, atLeast: others},
		{name: "proxied", kubeconfig: p.Kubeconfig(), atMost: 10},
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
			run := func(args ...string) {
				cmd := exec.Command(tf, args...)
				cmd.Dir = work
				cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work, "KUBE_CONFIG_PATH=" + side.kubeconfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"}
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
				}
			}
			run("init", "-input=false", "-no-color")
			before := fetchedSecrets(t, cs)
			run("apply", "-auto-approve", "-input=false", "-no-color")
			went := fetchedSecrets(t, cs) - before
			t.Logf("%s: the API server went through %.0f Secrets for the apply", side.name, went)
			if went < side.atLeast || side.atMost > 0 && went > side.atMost {
				t.Errorf("went through %.0f Secrets, want at least %.0f and at most %.0f", went, side.atLeast, side.atMost)
			}
			s, err := cs.CoreV1().Secrets("states").Get(ctx, "tfstate-default-"+side.name, metav1.GetOptions{})
			if err != nil || len(s.Data["tfstate"]) == 0 {
				t.Fatalf("the apply's state: %v, %d bytes", err, len(s.Data["tfstate"]))
			}
		})
	}
}

// fetchedSecrets is how many Secrets the API server has gone through to answer LISTs.
func fetchedSecrets(t *testing.T, cs *kubernetes.Clientset) float64 {
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
		if !strings.HasPrefix(line, "apiserver_storage_list_fetched_objects_total{") || !strings.Contains(line, `resource="secrets"`) {
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
