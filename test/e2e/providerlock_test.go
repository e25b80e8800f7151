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
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
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
variable "size" {
  type    = number
  default = 1
}
resource "random_pet" "p" { prefix = var.name }
resource "terraform_data" "size" { input = var.size }
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

// TestProviderUpgradeRollsOut: a mirror holds random 3.9.0, and a ModuleClass's two
// Modules run it; the class records the lock. Random 3.10.0 joins the mirror and the
// controller restarts. The class's rollout is paused: an ordinary edit of a claim applies
// on 3.9.0, and the plan that made it finds 3.10.0, which the class takes as a new
// revision that carries the newer lock. Nothing moves while the rollout is paused; once
// resumed, the Modules move to 3.10.0 in waves, and rollout status counts them by version.
func TestProviderUpgradeRollsOut(t *testing.T) {
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
		[]terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}, {FromFieldPath: "spec.storageGB", ToVariable: "size"}})
	class.SpecTemplate.ProviderConfigRefs = []common.LocalReference{{Name: "random-unpinned"}}
	class.SpecTemplate.ForProvider = nil
	class.SpecTemplate.Connection = []terraformv1.ConnectionMapping{{FromOutput: "endpoint", ToKey: "endpoint"}}
	class.SpecTemplate.Rollout = &common.RolloutPolicy{Canary: ptr.To[int32](1), MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	class.AllowedNamespaces = framework.Allow(appNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(classReady(g, ctx, class).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "pets"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "pets", Namespace: adminNS}})).To(Succeed())
	claims := map[string]*databasev1.PostgreSQLInstance{}
	claim := func(name string) *terraformv1.Module {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name}}
		c.Spec.ClassRef = &common.LocalReference{Name: "pets"}
		c.Spec.StorageGB = 1
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		waitClaimReady(g, ctx, c)
		claims[name] = c
		mod := &terraformv1.Module{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: c.Spec.ResourceRef.Name}, mod)).To(Succeed())
		return mod
	}
	lockOf := func(g Gomega, mod *terraformv1.Module) string {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		return lockedVersion(mod.Status.Terraform.ProviderLock)
	}

	By(t, "two Modules made with random 3.9.0 record their lock, and their class the module's")
	first, second := claim("first"), claim("second")
	g.Expect(lockOf(g, first)).To(Equal("3.9.0"))
	g.Expect(lockOf(g, second)).To(Equal("3.9.0"))
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		g.Expect(lockedVersion(class.Status.ProviderLock)).To(Equal("3.9.0"))
		g.Expect(class.Status.Providers).To(ConsistOf(common.ProviderVersionCount{Provider: "hashicorp/random", Version: "3.9.0", Resources: 2}))
	}).WithTimeout(timeout).Should(Succeed())
	before := class.Status.LatestRevision

	By(t, "random 3.10.0 joins the mirror, the controller restarts, and the class's rollout is paused")
	g.Expect(mgr.Stop()).To(Succeed())
	addRandomVersion(g, mirror, "3.10.0")
	g.Expect(updateLatest(ctx, class, func() { class.SpecTemplate.Rollout.Paused = true })).To(Succeed())
	mgr, err = env.StartManager(work, app.Options{Engine: tfengine.Options{PluginMirror: mirror}})
	g.Expect(err).NotTo(HaveOccurred())

	By(t, "an ordinary edit applies on the locked 3.9.0, and its plan offers the class 3.10.0 as a new revision")
	edited := time.Now()
	g.Expect(updateLatest(ctx, claims["first"], func() { claims["first"].Spec.StorageGB = 2 })).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(first), first)).To(Succeed())
		g.Expect(first.Status.Terraform.LastApply).NotTo(BeNil())
		g.Expect(first.Status.Terraform.LastApply.Time.Time).To(BeTemporally(">", edited.Add(-time.Second)))
		g.Expect(framework.Condition(first.Status.Conditions, common.TypeSynced).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(lockedVersion(first.Status.Terraform.ProviderLock)).To(Equal("3.9.0"))
	}).WithTimeout(timeout).Should(Succeed())
	t.Logf("the edit applied on random 3.9.0 %s after it was made", time.Since(edited).Round(time.Second))
	var upgraded string
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		upgraded = class.Status.LatestRevision
		g.Expect(upgraded).NotTo(Equal(before))
		rev := &terraformv1.ClassRevision{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: upgraded}, rev)).To(Succeed())
		g.Expect(lockedVersion(rev.Spec.ProviderLock)).To(Equal("3.10.0"))
		g.Expect(lockedVersion(class.Status.ProviderLock)).To(Equal("3.10.0"))
		g.Expect(class.Status.ProviderUpgrade).To(BeEmpty())
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		for _, m := range []*terraformv1.Module{first, second} {
			g.Expect(lockOf(g, m)).To(Equal("3.9.0"), "a paused rollout moves nothing")
			g.Expect(m.Spec.Revision).NotTo(Equal(upgraded))
		}
	}).WithTimeout(10 * time.Second).Should(Succeed())

	By(t, "resumed, the rollout moves the Modules to 3.10.0 in waves")
	resumed := time.Now()
	g.Expect(updateLatest(ctx, class, func() { class.SpecTemplate.Rollout.Paused = false })).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, m := range []*terraformv1.Module{first, second} {
			g.Expect(lockOf(g, m)).To(Equal("3.10.0"))
			g.Expect(m.Status.Revision).To(Equal(upgraded))
			g.Expect(framework.Condition(m.Status.Conditions, common.TypeSynced).Status).To(Equal(metav1.ConditionTrue))
		}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		g.Expect(class.Status.Rollout).NotTo(BeNil())
		g.Expect(class.Status.Rollout.CompletedAt).NotTo(BeNil())
		g.Expect(class.Status.Rollout.Wave).To(BeNumerically(">=", 2))
		g.Expect(class.Status.Providers).To(ConsistOf(common.ProviderVersionCount{Provider: "hashicorp/random", Version: "3.10.0", Resources: 2}))
	}).WithTimeout(2 * timeout).Should(Succeed())
	t.Logf("the upgrade rolled out to 2 Modules in %d waves, %s after the resume", class.Status.Rollout.Wave, time.Since(resumed).Round(time.Second))
	g.Expect(first.Status.Terraform.LastApply).NotTo(BeNil())
	g.Expect(first.Status.Terraform.Plan.Providers).To(ConsistOf(HaveField("To", "3.10.0")), "the plan that moved the Module names the provider's move")
	out := rolloutCLI(t, terraplaneBinary(t), "status", "moduleclass/pets", "-n", adminNS, "--kubeconfig", env.ControlPlane.Kubeconfig)
	g.Expect(out).To(MatchRegexp(`hashicorp/random\s+3\.10\.0\s+2`))

	By(t, "a new claim starts on the class's lock: 3.10.0")
	third := claim("third")
	g.Expect(lockOf(g, third)).To(Equal("3.10.0"))
}
