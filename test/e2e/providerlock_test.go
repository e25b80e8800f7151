package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	tfengine "terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/test/framework"
)

// petModule asks for any random provider of major version 3.
var petModule = map[string]string{"main.tf": `
terraform {
  required_providers {
    random = { source = "hashicorp/random", version = "~> 3.0" }
  }
}
variable "name" { type = string }
resource "random_pet" "p" { prefix = var.name }
output "endpoint" { value = random_pet.p.id }
`}

// addRandomVersion puts the tool cache's random provider into mirror as version v, under
// both registry hosts (terraform's and OpenTofu's). Terraform does not ask a provider its
// version: the directory and file names make it, and give it checksums of its own.
func addRandomVersion(g Gomega, mirror, v string) {
	bin, err := filepath.EvalSymlinks(filepath.Join(devenv.PluginMirror(), "registry.terraform.io", "hashicorp", "random", "3.9.0", "linux_amd64", "terraform-provider-random_v3.9.0_x5"))
	g.Expect(err).NotTo(HaveOccurred(), "the random provider comes from `make tools`")
	for _, host := range []string{"registry.terraform.io", "registry.opentofu.org"} {
		dir := filepath.Join(mirror, host, "hashicorp", "random", v, "linux_amd64")
		g.Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		g.Expect(os.Symlink(bin, filepath.Join(dir, "terraform-provider-random_v"+v+"_x5"))).To(Succeed())
	}
}

// lockedVersion is the random provider's version in a dependency lock.
func lockedVersion(lock string) string {
	m := regexp.MustCompile(`hashicorp/random" \{\s*version\s*=\s*"([^"]+)"`).FindStringSubmatch(lock)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestProviderLock: a mirror holds random 3.9.0; a claim's Module through a ModuleClass is
// made with it, and the class records the lock. Random 3.10.0 is added and the controller
// restarted: a new claim of the class still gets 3.9.0, the first Module's next plan is
// made with 3.10.0 and waits for approval (ProviderUpgrade) with 3.9.0 kept, and only its
// approval moves the Module to 3.10.0.
func TestProviderLock(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-provider-lock"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	mirror, work := t.TempDir(), t.TempDir()
	addRandomVersion(g, mirror, "3.9.0")
	mgr, err := env.StartManager(work, app.Options{Engine: tfengine.Options{PluginMirror: mirror}})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "pets-module"}, Data: petModule}
	g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "random-unpinned"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random"}})).To(Succeed())
	class := moduleClass(adminNS, "pets", terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}},
		[]terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}})
	class.SpecTemplate.ProviderConfigRefs = []common.LocalReference{{Name: "random-unpinned"}}
	class.SpecTemplate.ForProvider = nil
	class.SpecTemplate.Connection = []terraformv1.ConnectionMapping{{FromOutput: "endpoint", ToKey: "endpoint"}}
	class.AllowedNamespaces = framework.Allow(appNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(classReady(g, ctx, class).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "pets"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "pets", Namespace: adminNS}})).To(Succeed())
	claim := func(name string) *terraformv1.Module {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name}}
		c.Spec.ClassRef = &common.LocalReference{Name: "pets"}
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		waitClaimReady(g, ctx, c)
		mod := &terraformv1.Module{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: c.Spec.ResourceRef.Name}, mod)).To(Succeed())
		return mod
	}

	By(t, "a Module made with random 3.9.0 records its lock, and its class the module's")
	first := claim("first")
	g.Expect(lockedVersion(first.Status.Terraform.ProviderLock)).To(Equal("3.9.0"))
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		g.Expect(lockedVersion(class.Status.ProviderLock)).To(Equal("3.9.0"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "random 3.10.0 joins the mirror and the controller restarts")
	g.Expect(mgr.Stop()).To(Succeed())
	addRandomVersion(g, mirror, "3.10.0")
	restarted := time.Now()
	mgr, err = env.StartManager(work, app.Options{Engine: tfengine.Options{PluginMirror: mirror}})
	g.Expect(err).NotTo(HaveOccurred())

	By(t, "a new Module of the class is made with the class's lock: 3.9.0")
	second := claim("second")
	g.Expect(lockedVersion(second.Status.Terraform.ProviderLock)).To(Equal("3.9.0"))
	t.Logf("second Module Ready with random 3.9.0 %s after the restart", time.Since(restarted).Round(time.Second))

	By(t, "the first Module's next plan is made with 3.10.0 and waits for approval; 3.9.0 stays")
	g.Expect(updateLatest(ctx, first, func() {
		first.Annotations = map[string]string{common.RequestedAtAnnotation: time.Now().Format(time.RFC3339Nano)}
	})).To(Succeed())
	asked := time.Now()
	var planID string
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(first), first)).To(Succeed())
		synced := framework.Condition(first.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal(common.ReasonProviderUpgrade), "Synced: %+v", synced)
		g.Expect(synced.Message).To(ContainSubstring("hashicorp/random 3.9.0 -> 3.10.0"))
		plan := first.Status.Terraform.Plan
		g.Expect(plan).NotTo(BeNil())
		g.Expect(plan.Providers).To(ConsistOf(HaveField("To", "3.10.0")))
		planID = plan.ID
	}).WithTimeout(timeout).Should(Succeed())
	t.Logf("ProviderUpgrade plan %s held %s after the plan was asked for", planID, time.Since(asked).Round(time.Second))
	g.Expect(lockedVersion(first.Status.Terraform.ProviderLock)).To(Equal("3.9.0"))
	g.Expect(framework.Condition(first.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
	events, err := env.Events(ctx, first)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(events).To(ContainElement(HaveField("Reason", common.ReasonProviderUpgrade)))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(second), second)).To(Succeed())
	g.Expect(lockedVersion(second.Status.Terraform.ProviderLock)).To(Equal("3.9.0"))

	By(t, "approving the plan moves the first Module to 3.10.0")
	g.Eventually(func(g Gomega) {
		g.Expect(updateLatest(ctx, first, func() {
			first.Spec.ApprovedPlan = planID
		})).To(Succeed())
	}).WithTimeout(timeout).Should(Succeed(), "the controller writes the Module too: approve on its latest version")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(first), first)).To(Succeed())
		g.Expect(framework.Condition(first.Status.Conditions, common.TypeSynced).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(lockedVersion(first.Status.Terraform.ProviderLock)).To(Equal("3.10.0"))
		g.Expect(first.Status.Terraform.LastApply).NotTo(BeNil())
		g.Expect(first.Status.Terraform.LastApply.ID).To(Equal(planID))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
	g.Expect(lockedVersion(class.Status.ProviderLock)).To(Equal("3.9.0"), "the class's lock is where new Modules start")
}
