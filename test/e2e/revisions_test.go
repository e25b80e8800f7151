package e2e

import (
	"context"
	"strings"
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
	"terraplane.io/terraplane/test/framework"
)

// versionedModule is a module without providers whose endpoint says its version.
func versionedModule(version string) map[string]string {
	return map[string]string{"main.tf": `
variable "name" { type = string }
resource "terraform_data" "db" { input = "` + version + `-${var.name}" }
output "endpoint" { value = terraform_data.db.output }
`}
}

// TestClassRevisions: a ModuleClass's Modules run its first revision; an edit of the
// module makes a second, which the Module that follows revisions (Automatic) runs at once
// while the one that stays (Manual) keeps the first, as the class's status.revisions
// counts; moving that one by spec.revision runs the second there too.
func TestClassRevisions(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-revisions"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "versioned-module"}, Data: versionedModule("v1")}
	g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	class := moduleClass(adminNS, "versioned", terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}},
		[]terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}})
	class.SpecTemplate.ProviderConfigRefs, class.SpecTemplate.ForProvider = nil, nil
	class.SpecTemplate.Connection = []terraformv1.ConnectionMapping{{FromOutput: "endpoint", ToKey: "endpoint"}}
	class.AllowedNamespaces = framework.Allow(appNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "versioned"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "versioned", Namespace: adminNS}})).To(Succeed())
	var first string
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		g.Expect(class.Status.LatestRevision).NotTo(BeEmpty())
		first = class.Status.LatestRevision
	}).WithTimeout(timeout).Should(Succeed())

	modules := map[string]*terraformv1.Module{}
	for _, name := range []string{"follows", "stays"} {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name}}
		c.Spec.ClassRef = &common.LocalReference{Name: "versioned"}
		c.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: name + "-conn"}
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		waitClaimReady(g, ctx, c)
		mod := &terraformv1.Module{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: c.Spec.ResourceRef.Name}, mod)).To(Succeed())
		g.Expect(mod.Spec.Revision).To(Equal(first))
		modules[name] = mod
	}
	endpoint := func(g Gomega, claim string) string {
		s := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: claim + "-conn"}, s)).To(Succeed())
		return string(s.Data["endpoint"])
	}
	running := func(g Gomega, name string) string {
		mod := modules[name]
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		return mod.Status.Revision
	}
	g.Eventually(func(g Gomega) {
		g.Expect(running(g, "follows")).To(Equal(first))
		g.Expect(running(g, "stays")).To(Equal(first))
		g.Expect(endpoint(g, "stays")).To(Equal("v1-stays"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "one Module stays on its revision (revisionPolicy: Manual); the module changes")
	stays := modules["stays"]
	g.Expect(env.Client.Patch(ctx, stays, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"revisionPolicy":"Manual"}}`)))).To(Succeed())
	g.Expect(updateLatest(ctx, cm, func() {
		cm.Data = versionedModule("v2")
	})).To(Succeed())
	edited := time.Now()
	var second string
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		second = class.Status.LatestRevision
		g.Expect(second).NotTo(Equal(first))
		g.Expect(endpoint(g, "follows")).To(Equal("v2-follows"))
		g.Expect(running(g, "follows")).To(Equal(second))
	}).WithTimeout(timeout).Should(Succeed())
	t.Logf("revision %s made and run by the Automatic Module %s after the module's edit", second, time.Since(edited).Round(time.Second))
	g.Consistently(func(g Gomega) {
		g.Expect(endpoint(g, "stays")).To(Equal("v1-stays"))
		g.Expect(running(g, "stays")).To(Equal(first))
		g.Expect(stays.Spec.Revision).To(Equal(first))
	}).WithTimeout(10 * time.Second).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		counts := map[string]int{}
		for _, r := range class.Status.Revisions {
			counts[r.Name] = r.Resources
		}
		g.Expect(counts).To(Equal(map[string]int{first: 1, second: 1}))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a revision is immutable")
	rev := &terraformv1.ClassRevision{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: first}, rev)).To(Succeed())
	rev.Spec.ProviderLock = "changed"
	err = env.Client.Update(ctx, rev)
	g.Expect(err).To(HaveOccurred())
	g.Expect(strings.Contains(err.Error(), "immutable")).To(BeTrue(), err.Error())

	By(t, "moving the Manual Module by spec.revision runs the new revision there too")
	g.Expect(env.Client.Patch(ctx, stays, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"revision":"`+second+`"}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(endpoint(g, "stays")).To(Equal("v2-stays"))
		g.Expect(running(g, "stays")).To(Equal(second))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		g.Expect(class.Status.Revisions).To(ContainElement(And(HaveField("Name", second), HaveField("Resources", 2))))
	}).WithTimeout(timeout).Should(Succeed())
}
