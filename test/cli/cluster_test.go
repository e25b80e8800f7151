package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/test/framework"
)

const timeout = 2 * time.Minute

// twoContexts writes a kubeconfig whose current context points at nothing listening and
// whose context "good" is the test cluster.
func twoContexts(t *testing.T) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(env.ControlPlane.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	good := cfg.Contexts[cfg.CurrentContext].DeepCopy()
	cfg.Contexts["good"] = good
	cfg.Clusters["broken"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", InsecureSkipTLSVerify: true}
	cfg.Contexts["broken"] = &clientcmdapi.Context{Cluster: "broken", AuthInfo: good.AuthInfo}
	cfg.CurrentContext = "broken"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// pausedModule is a Module no controller acts on, for commands that only read it.
func pausedModule(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	if err := env.Namespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{common.PausedAnnotation: "true"}}}
	m.Spec.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: "unused"}
	m.Spec.ReclaimPolicy = common.ReclaimRetain
	if err := env.Client.Create(ctx, m); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
}

func TestKubeconfigLoadingRulesAndContext(t *testing.T) {
	pausedModule(t, "cli-loading", "idle")
	raw, err := os.ReadFile(env.ControlPlane.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".kube", "config"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	onlyHome := append(userEnv(t), "HOME="+home) // the later HOME wins
	r := terraplane(t, onlyHome, "unlock", "Module/idle", "-n", "cli-loading")
	if r.code != 0 || !strings.Contains(r.stdout, "Module/idle: the Terraform state is not locked") {
		t.Fatalf("~/.kube/config alone must do: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	both := twoContexts(t)
	r = terraplane(t, userEnv(t, "KUBECONFIG="+both), "unlock", "Module/idle", "-n", "cli-loading")
	assertOneLineError(t, r, 1, "127.0.0.1:1")
	r = terraplane(t, userEnv(t, "KUBECONFIG="+both), "unlock", "Module/idle", "-n", "cli-loading", "--context", "good")
	if r.code != 0 || !strings.Contains(r.stdout, "not locked") {
		t.Fatalf("--context good: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = terraplane(t, userEnv(t), "unlock", "Module/idle", "-n", "cli-loading", "--kubeconfig", both, "--context", "nowhere")
	assertOneLineError(t, r, 1, "nowhere")
}

// flatModule is a module terraform runs with no provider at all.
var flatModule = map[string]string{"main.tf": `
variable "name" { type = string }
resource "terraform_data" "thing" { input = var.name }
output "thing" { value = terraform_data.thing.output }
`}

// runModule creates a Module from flatModule in ns and waits until it is Ready; it returns
// the Module.
func runModule(t *testing.T, ns, name string) *terraformv1.Module {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-module"}, Data: flatModule})).To(Succeed())
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.Spec.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: name + "-module"}
	m.Spec.ReclaimPolicy = common.ReclaimDelete
	g.Expect(m.SetForProvider(map[string]any{"name": name})).To(Succeed())
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(framework.Condition(m.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue), "%+v", m.Status.Conditions)
	}).WithTimeout(timeout).Should(Succeed())
	return m
}

// stateSecret is the Secret terraform's kubernetes backend keeps m's state in.
func stateSecret(t *testing.T, m *terraformv1.Module) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: m.Namespace, Name: resource.StateSecretName(m)}, s); err != nil {
		t.Fatalf("state Secret of %s: %v", m.Name, err)
	}
	return s
}

// TestControllerStateFollowsItsCluster runs `terraplane controller --kubeconfig X` with no
// --state-kubeconfig, no KUBECONFIG and no ~/.kube/config: terraform's state backend
// must reach the same cluster. Then the same through --context, with the kubeconfig's
// current context pointing nowhere.
func TestControllerStateFollowsItsCluster(t *testing.T) {
	// the state backend through the controller's proxy (the default), then direct
	for _, tc := range []struct{ name, proxy string }{{"through-the-proxy", "true"}, {"direct", "false"}} {
		t.Run("kubeconfig, "+tc.name, func(t *testing.T) {
			c := startController(t, userEnv(t), "--kubeconfig", env.ControlPlane.Kubeconfig, "--state-backend-proxy="+tc.proxy)
			m := runModule(t, "cli-controller", tc.name)
			stateSecret(t, m)
			if c.exited() {
				t.Fatal("the controller stopped")
			}
		})
	}
	// Talking to the API server itself, the backend block names the kubeconfig's context;
	// through the controller's proxy it names no cluster (the proxy reaches it at the
	// context in use).
	for _, tc := range []struct {
		name, module, backend string
		flags                 []string
	}{
		{name: "context", module: "by-context", backend: `"config_context": "good"`, flags: []string{"--state-backend-proxy=false"}},
		{name: "context, through the proxy", module: "by-context-proxy", backend: `"kubernetes": {}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			workdir := t.TempDir()
			args := append([]string{"--kubeconfig", twoContexts(t), "--context", "good", "--workdir", workdir}, tc.flags...)
			c := startController(t, userEnv(t), args...)
			m := runModule(t, "cli-controller-ctx", tc.module)
			stateSecret(t, m)
			main, err := os.ReadFile(filepath.Join(workdir, string(m.UID), "main.tf.json"))
			if err != nil {
				t.Fatalf("the workspace's root module: %v", err)
			}
			if !strings.Contains(string(main), tc.backend) {
				t.Errorf("the state backend block, want %s:\n%s", tc.backend, main)
			}
			if _, err := os.Stat(filepath.Join(workdir, "state-kubeconfig")); !os.IsNotExist(err) {
				t.Error("no copy of the credentials is written")
			}
			if c.exited() {
				t.Fatal("the controller stopped")
			}
		})
	}
}
