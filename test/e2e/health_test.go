package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/argocd"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/test/framework"
)

// healthModule is a server that a change of size replaces, whose create takes sleep
// seconds; a sleep that is no number is an input terraform refuses.
var healthModule = map[string]string{"main.tf": `
variable "size" {
  type    = string
  default = "small"
}
variable "sleep" {
  type    = number
  default = 0
}
resource "terraform_data" "server" {
  triggers_replace = var.size
  input            = var.size
  provisioner "local-exec" {
    command = "sleep ${var.sleep}"
  }
}
output "size" { value = terraform_data.server.output }
`}

// failingModule fails every apply, as a cloud API that keeps erroring does.
var failingModule = map[string]string{"main.tf": `
resource "terraform_data" "x" {
  provisioner "local-exec" {
    command = "echo the cloud is down >&2; exit 1"
  }
}
`}

// health is what Argo CD (the chart's scripts) and kstatus read of an object.
type health struct {
	Argo    string
	KStatus status.Status
}

// healthOf reads obj as unstructured, as both tools see it, and evaluates both.
func healthOf(g Gomega, ctx context.Context, obj client.Object) (health, string) {
	gvk, err := apiutil.GVKForObject(obj, env.Client.Scheme())
	g.Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), u)).To(Succeed())
	scripts, err := argocd.ReadScripts("../../charts/terraplane/argocd")
	g.Expect(err).NotTo(HaveOccurred())
	family := argocd.FamilyOf(argocd.All(kinds.NewRegistry(nil)), gvk.GroupKind())
	argo, err := argocd.Eval(scripts[family], u.Object)
	g.Expect(err).NotTo(HaveOccurred())
	kst, err := status.Compute(u)
	g.Expect(err).NotTo(HaveOccurred())
	return health{argo.Status, kst.Status}, fmt.Sprintf("%s %s: Argo CD %q, kstatus %q; conditions %v",
		gvk.Kind, obj.GetName(), argo.Message, kst.Message, u.Object["status"])
}

// expectHealth waits until obj reads as want to both tools.
func expectHealth(t *testing.T, g Gomega, ctx context.Context, obj client.Object, want health) {
	t.Helper()
	var said string
	g.Eventually(func(g Gomega) {
		var got health
		got, said = healthOf(g, ctx, obj)
		g.Expect(got).To(Equal(want), said)
	}).WithTimeout(timeout).Should(Succeed())
	t.Logf("%s", said)
}

// healthModuleObj is a Module of healthModule with forProvider values.
func healthModuleObj(ns, name, source, values string, edit func(*terraformv1.Module)) *terraformv1.Module {
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: source}}
	m.Spec.ReclaimPolicy = common.ReclaimDelete
	m.Spec.ForProvider = &apiextensionsv1.JSON{Raw: []byte(values)}
	if edit != nil {
		edit(m)
	}
	return m
}

// TestHealthEveryState: the objects the controllers write read, to Argo CD (the chart's
// Lua health checks run by gopher-lua) and to kstatus (cli-utils' status.Compute), as
// each state is: a Module, a claim through a ModuleClass, a native Object, a ModuleClass,
// a ClaimDefinition, a kubernetes ProviderConfig and KubernetesApplications (and their
// resources), each ready, in progress, awaiting approval, refused, failed (an input
// terraform refuses, a class mapping no variable, a definition naming no class, missing
// credentials, a kind the cluster does not serve) and failing (retried).
func TestHealthEveryState(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns, appNS := "e2e-health", "e2e-health-app"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	for name, files := range map[string]map[string]string{"health-module": healthModule, "failing-module": failingModule} {
		g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: files})).To(Succeed())
	}
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	healthy := health{"Healthy", status.CurrentStatus}
	progressing := health{"Progressing", status.InProgressStatus}
	suspended := health{"Suspended", status.FailedStatus}
	degraded := health{"Degraded", status.FailedStatus}
	retrying := health{"Degraded", status.InProgressStatus}

	By(t, "Modules in every state")
	slow := healthModuleObj(ns, "slow", "health-module", `{"sleep": 60}`, nil)
	ready := healthModuleObj(ns, "ready", "health-module", `{}`, nil)
	awaiting := healthModuleObj(ns, "awaiting", "health-module", `{}`, func(m *terraformv1.Module) { m.Spec.Approval = common.ApprovalManual })
	refused := healthModuleObj(ns, "refused", "health-module", `{}`, nil)
	badInput := healthModuleObj(ns, "bad-input", "health-module", `{"sleep": "a while"}`, nil)
	failing := healthModuleObj(ns, "failing", "failing-module", `{}`, nil)
	for _, m := range []*terraformv1.Module{slow, ready, awaiting, refused, badInput, failing} {
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	}
	expectHealth(t, g, ctx, slow, progressing) // its create sleeps a minute
	expectHealth(t, g, ctx, ready, healthy)
	expectHealth(t, g, ctx, awaiting, suspended)
	expectHealth(t, g, ctx, badInput, degraded)
	expectHealth(t, g, ctx, failing, retrying)
	expectHealth(t, g, ctx, refused, healthy)
	setForProvider(g, ctx, refused, map[string]any{"size": "large"}) // replaces the server
	expectHealth(t, g, ctx, refused, degraded)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(refused), refused)).To(Succeed())
	g.Expect(framework.Condition(refused.Status.Conditions, common.TypeStalled).Reason).To(Equal(common.ReasonDestructiveChangeRefused))

	By(t, "claims through ModuleClasses: ready, awaiting approval, in progress, failed, and refused")
	classes := map[string]func(*terraformv1.ModuleClass){
		"health":        nil,
		"health-manual": func(c *terraformv1.ModuleClass) { c.SpecTemplate.Approval = common.ApprovalManual },
		"health-slow": func(c *terraformv1.ModuleClass) {
			c.SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"sleep": 60}`)}
		},
		"health-bad": func(c *terraformv1.ModuleClass) {
			c.SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"sleep": "a while"}`)}
		},
	}
	for name, edit := range classes {
		c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, AllowedNamespaces: framework.Allow(appNS)}
		c.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
		c.SpecTemplate.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "health-module"}}
		c.SpecTemplate.Inputs = []terraformv1.InputMapping{{FromFieldPath: "spec.storageGB", ToVariable: "size"}}
		if edit != nil {
			edit(c)
		}
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name},
			ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: name, Namespace: ns}})).To(Succeed())
	}
	claim := func(name, class string) *databasev1.PostgreSQLInstance {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name}}
		c.Spec.ClassRef = &common.LocalReference{Name: class}
		c.Spec.StorageGB = 10
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		return c
	}
	slowClaim := claim("slow", "health-slow")
	readyClaim, awaitingClaim, badClaim, refusedClaim := claim("ready", "health"), claim("awaiting", "health-manual"),
		claim("bad-input", "health-bad"), claim("refused", "health")
	expectHealth(t, g, ctx, slowClaim, progressing)
	expectHealth(t, g, ctx, readyClaim, healthy)
	expectHealth(t, g, ctx, awaitingClaim, suspended)
	expectHealth(t, g, ctx, badClaim, degraded)
	expectHealth(t, g, ctx, refusedClaim, healthy)
	g.Expect(editClaim(ctx, refusedClaim, func(c *databasev1.PostgreSQLInstance) { c.Spec.StorageGB = 20 })).To(Succeed())
	expectHealth(t, g, ctx, refusedClaim, degraded)

	By(t, "ModuleClasses: valid, and with a mapping to no variable")
	expectHealth(t, g, ctx, &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "health"}}, healthy)
	invalid := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "health-invalid"}}
	invalid.SpecTemplate.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "health-module"}}
	invalid.SpecTemplate.Inputs = []terraformv1.InputMapping{{FromFieldPath: "spec.storageGB", ToVariable: "no_such_variable"}}
	g.Expect(env.Client.Create(ctx, invalid)).To(Succeed())
	expectHealth(t, g, ctx, invalid, degraded) // Stalled: its inputs must be fixed
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(invalid), invalid)).To(Succeed())
	g.Expect(framework.Condition(invalid.Status.Conditions, common.TypeStalled).Reason).To(Equal("InvalidMapping"))

	By(t, "ClaimDefinitions: served, and naming a ModuleClass that does not exist")
	definition := func(kind string, edit func(*apiextv1.ClaimDefinition)) *apiextv1.ClaimDefinition {
		plural := strings.ToLower(kind) + "s"
		d := &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: plural + ".health.example.org"},
			Spec: apiextv1.ClaimDefinitionSpec{Group: "health.example.org", Names: apiextv1.ClaimDefinitionNames{Kind: kind, Plural: plural}}}
		edit(d)
		g.Expect(env.Client.Create(ctx, d)).To(Succeed())
		return d
	}
	expectHealth(t, g, ctx, definition("Gauge", func(d *apiextv1.ClaimDefinition) {
		d.Spec.Schema = &apiextensionsv1.JSON{Raw: []byte(`{"type": "object", "properties": {"size": {"type": "integer"}}}`)}
	}), healthy)
	expectHealth(t, g, ctx, definition("Dial", func(d *apiextv1.ClaimDefinition) {
		d.Spec.FromModule = &apiextv1.FromModule{ModuleClassRef: apiextv1.ModuleClassReference{Name: "no-such-class", Namespace: ns}}
	}), degraded)

	By(t, "native Objects on the control plane itself: applied, waiting for a namespace, refused by the cluster")
	self, err := os.ReadFile(env.ControlPlane.Kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, kubeconfigSecret(ns, "self-kubeconfig", self))).To(Succeed())
	pc := providerConfig(ns, "self", "self-kubeconfig")
	g.Expect(env.Client.Create(ctx, pc)).To(Succeed())
	expectHealth(t, g, ctx, pc, healthy)
	noCredentials := providerConfig(ns, "no-credentials", "no-such-secret")
	g.Expect(env.Client.Create(ctx, noCredentials)).To(Succeed())
	expectHealth(t, g, ctx, noCredentials, degraded)
	native := func(name string, manifest map[string]any, apiVersion, kind, targetNS string) *kubernetesv1.Object {
		o := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		o.Spec.ProviderRef = &common.LocalReference{Name: "self"}
		o.Spec.ReclaimPolicy = common.ReclaimDelete
		o.Spec.ForProvider.Manifest = object(apiVersion, kind, targetNS, "health-"+name, manifest)
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
		return o
	}
	data := map[string]any{"data": map[string]any{"k": "v"}}
	expectHealth(t, g, ctx, native("applied", data, "v1", "ConfigMap", ns), healthy)
	expectHealth(t, g, ctx, native("waiting", data, "v1", "ConfigMap", "e2e-health-nowhere"), progressing)
	expectHealth(t, g, ctx, native("refused", data, "example.org/v1", "NoSuchKind", ns), degraded)

	By(t, "KubernetesApplications on the control plane itself: submitted, and refused by the cluster")
	onSelf := &workloadv1.ProviderConfigReference{Name: "self"}
	submitted := configMapApp(ns, "health-app", onSelf, "health-app")
	refusedApp := configMapApp(ns, "health-refused", onSelf, "health-refused")
	refusedApp.Spec.ResourceTemplates[0].Spec.Template = object("example.org/v1", "NoSuchKind", ns, "health-refused", nil)
	for _, a := range []*workloadv1.KubernetesApplication{submitted, refusedApp} {
		g.Expect(env.Client.Create(ctx, a)).To(Succeed())
	}
	resourceOf := func(name string) *workloadv1.KubernetesApplicationResource {
		return &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	expectHealth(t, g, ctx, submitted, healthy)
	expectHealth(t, g, ctx, resourceOf("health-app-config"), healthy)
	expectHealth(t, g, ctx, resourceOf("health-refused-config"), degraded)
	expectHealth(t, g, ctx, refusedApp, degraded)
}
