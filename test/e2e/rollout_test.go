package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// badModule is v2 of versionedModule: its plan fails for the names that end in 1 or 6.
var badModule = map[string]string{"main.tf": `
variable "name" { type = string }
resource "terraform_data" "db" {
  input = "v2-${var.name}"
  lifecycle {
    precondition {
      condition     = !endswith(var.name, "1") && !endswith(var.name, "6")
      error_message = "v2 cannot serve ${var.name}"
    }
  }
}
output "endpoint" { value = terraform_data.db.output }
`}

// TestRollout: 20 Modules of one ModuleClass (canary 2, then batches of 3, in the order of
// their claims' names); a module change that fails for some inputs (pet-01, -06, -11, -16)
// is caught by the canary, the rollout pauses (RolloutPaused, an event) with at most
// canary + 1 batch on the bad revision, and `terraplane rollout undo` brings them back.
func TestRollout(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-rollout"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	cli := terraplaneBinary(t)
	kc := env.ControlPlane.Kubeconfig

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "fleet-module"}, Data: versionedModule("v1")}
	g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	class := moduleClass(adminNS, "fleet", terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}},
		[]terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}})
	class.SpecTemplate.ProviderConfigRefs, class.SpecTemplate.ForProvider = nil, nil
	class.SpecTemplate.Connection = []terraformv1.ConnectionMapping{{FromOutput: "endpoint", ToKey: "endpoint"}}
	const canary, batch = 2, 3
	class.SpecTemplate.Rollout = &common.RolloutPolicy{Canary: ptr.To[int32](canary), MaxUnavailable: ptr.To(intstr.FromInt32(batch))}
	class.AllowedNamespaces = framework.Allow(appNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "fleet"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "fleet", Namespace: adminNS}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		g.Expect(class.Status.LatestRevision).NotTo(BeEmpty())
	}).WithTimeout(timeout).Should(Succeed())
	first := class.Status.LatestRevision

	By(t, "20 claims, each a Module of the class on its first revision")
	made := time.Now()
	for i := range 20 {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: fmt.Sprintf("pet-%02d", i)}}
		c.Spec.ClassRef = &common.LocalReference{Name: "fleet"}
		c.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: c.Name + "-conn"}
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
	}
	fleet := func(g Gomega) []terraformv1.Module {
		list := &terraformv1.ModuleList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(adminNS))).To(Succeed())
		var out []terraformv1.Module
		for _, m := range list.Items {
			if m.Spec.ClassRef != nil && m.Spec.ClassRef.Name == "fleet" {
				out = append(out, m)
			}
		}
		return out
	}
	on := func(mods []terraformv1.Module, rev string, running bool) []string {
		var names []string
		for _, m := range mods {
			if m.Spec.Revision == rev && (!running || m.Status.Revision == rev && framework.Condition(m.Status.Conditions, common.TypeReady).Status == metav1.ConditionTrue) {
				names = append(names, m.Spec.ClaimRef.Name)
			}
		}
		sort.Strings(names)
		return names
	}
	g.Eventually(func(g Gomega) {
		g.Expect(on(fleet(g), first, true)).To(HaveLen(20))
	}).WithTimeout(2 * timeout).Should(Succeed())
	t.Logf("20 Modules Ready on revision %s in %s", first, time.Since(made).Round(time.Second))

	By(t, "a module change that fails for the names ending in 1 or 6")
	g.Expect(updateLatest(ctx, cm, func() {
		cm.Data = badModule
	})).To(Succeed())
	edited := time.Now()
	var second string
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		second = class.Status.LatestRevision
		g.Expect(second).NotTo(Equal(first))
		paused := framework.Condition(class.Status.Conditions, common.TypeRolloutPaused)
		g.Expect(paused.Status).To(Equal(metav1.ConditionTrue), "RolloutPaused: %+v", paused)
		g.Expect(paused.Reason).To(Equal(common.ReasonRolloutFailed))
		g.Expect(paused.Message).To(ContainSubstring("v2 cannot serve pet-01"))
	}).WithTimeout(timeout).Should(Succeed())
	toPause := time.Since(edited)
	ro := class.Status.Rollout
	t.Logf("rollout of %s paused %s after the module's edit, in wave %d: %s", second, toPause.Round(time.Second), ro.Wave, ro.Message)
	g.Consistently(func(g Gomega) {
		touched := on(fleet(g), second, false)
		g.Expect(len(touched)).To(BeNumerically("<=", canary+batch), "resources on the bad revision: %v", touched)
	}).WithTimeout(10 * time.Second).Should(Succeed())
	touched := on(fleet(g), second, false)
	claims := map[string]string{}
	for _, m := range fleet(g) {
		claims[m.Name] = m.Spec.ClaimRef.Name
	}
	var waves []string
	for _, name := range ro.Admitted {
		waves = append(waves, claims[name])
	}
	t.Logf("waves let onto %s: %d, canary %v, then %v; on the bad revision: %d of 20 (%v), of which %d run it",
		second, ro.Wave, waves[:min(canary, len(waves))], waves[min(canary, len(waves)):], len(touched), touched, len(on(fleet(g), second, true)))
	events, err := env.Events(ctx, class)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(events).To(ContainElement(And(HaveField("Reason", common.TypeRolloutPaused), HaveField("Type", corev1.EventTypeWarning))))
	status := rolloutCLI(t, cli, "status", "moduleclass/fleet", "-n", adminNS, "--kubeconfig", kc)
	g.Expect(status).To(And(ContainSubstring("paused (RolloutFailed)"), ContainSubstring(second)), status)

	By(t, "rollout undo brings them back to the first revision")
	undone := time.Now()
	g.Expect(rolloutCLI(t, cli, "undo", "moduleclass/fleet", "-n", adminNS, "--kubeconfig", kc)).To(ContainSubstring("back to revision " + first))
	g.Eventually(func(g Gomega) {
		mods := fleet(g)
		g.Expect(on(mods, first, true)).To(HaveLen(20))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		paused := framework.Condition(class.Status.Conditions, common.TypeRolloutPaused)
		g.Expect(paused.Reason).To(Equal(common.ReasonRolloutComplete), "RolloutPaused: %+v", paused)
		for _, m := range mods {
			s := &corev1.Secret{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: m.Spec.WriteConnectionSecretToRef.Namespace, Name: m.Spec.WriteConnectionSecretToRef.Name}, s)).To(Succeed())
			g.Expect(string(s.Data["endpoint"])).To(HavePrefix("v1-"))
		}
	}).WithTimeout(2 * timeout).Should(Succeed())
	t.Logf("undo: the %d resources back on %s in %s (%d waves)", len(touched), first, time.Since(undone).Round(time.Second), class.Status.Rollout.Wave)
	g.Expect(rolloutCLI(t, cli, "status", "moduleclass/fleet", "-n", adminNS, "--kubeconfig", kc, "--watch", "--timeout", "10s")).To(ContainSubstring("runs on all 20"))

	By(t, "rollout pause and resume")
	pausedAs := func(reason string) func(g Gomega) {
		return func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
			g.Expect(framework.Condition(class.Status.Conditions, common.TypeRolloutPaused).Reason).To(Equal(reason))
		}
	}
	rolloutCLI(t, cli, "pause", "moduleclass/fleet", "-n", adminNS, "--kubeconfig", kc)
	g.Eventually(pausedAs(common.ReasonRolloutPauseRequested)).WithTimeout(timeout).Should(Succeed())
	rolloutCLI(t, cli, "resume", "moduleclass/fleet", "-n", adminNS, "--kubeconfig", kc)
	g.Eventually(pausedAs(common.ReasonRolloutComplete)).WithTimeout(timeout).Should(Succeed())
}

// rolloutCLI runs terraplane rollout with args and returns its output.
func rolloutCLI(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"rollout"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("terraplane rollout %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
