package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// TestProviderInUse: a ProviderConfig that a Module uses holds a finalizer and names its
// user; deleting it waits (deletionTimestamp set, InUse says why) until the claim, and so
// the Module, is gone. A provider removed by force leaves the claim's deletion blocked,
// and the claim says why.
func TestProviderInUse(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-provider-usage"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-module"}, Data: teamModule})).To(Succeed())
	randomPC := func() *terraformv1.ProviderConfig {
		return &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "random"},
			Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}}
	}
	g.Expect(env.Client.Create(ctx, randomPC())).To(Succeed())
	class := moduleClass(ns, "team", terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "team-module"}},
		[]terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}})
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "team"}})).To(Succeed())
	newClaim := func(name string) *databasev1.PostgreSQLInstance {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		c.Spec.ClassRef = &common.LocalReference{Name: "team"}
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		waitClaimReady(g, ctx, c)
		return c
	}
	pc := randomPC()
	getPC := func(g Gomega) *terraformv1.ProviderConfig {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pc), pc)).To(Succeed())
		return pc
	}

	By(t, "the ProviderConfig holds a finalizer and names the Module that uses it")
	claim := newClaim("orders")
	user := "Module " + ns + "/" + claim.Spec.ResourceRef.Name
	g.Eventually(func(g Gomega) {
		pc := getPC(g)
		g.Expect(pc.Finalizers).To(ContainElement(common.InUseFinalizer))
		g.Expect(pc.Status.Users).To(Equal(1))
		inUse := framework.Condition(pc.Status.Conditions, common.TypeInUse)
		g.Expect(inUse.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(inUse.Message).To(Equal("used by 1: " + user))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "deleting it is refused while the Module uses it: it stays, and says for whom")
	g.Expect(env.Client.Delete(ctx, randomPC())).To(Succeed())
	g.Eventually(func(g Gomega) {
		pc := getPC(g)
		g.Expect(pc.DeletionTimestamp).NotTo(BeNil())
		inUse := framework.Condition(pc.Status.Conditions, common.TypeInUse)
		g.Expect(inUse.Reason).To(Equal("DeletionBlocked"))
		g.Expect(inUse.Message).To(ContainSubstring("deletion waits until nothing uses this ProviderConfig; used by 1: " + user))
		events, err := env.Events(ctx, pc)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(events).To(ContainElement(HaveField("Reason", "DeletionBlocked")))
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(getPC(g).DeletionTimestamp).NotTo(BeNil()) }).WithTimeout(3 * time.Second).Should(Succeed())

	By(t, "it goes once the claim, and so the Module, is gone")
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(pc), &terraformv1.ProviderConfig{}))
	}).WithTimeout(timeout).Should(BeTrue())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim))).To(BeTrue())

	By(t, "a ProviderConfig removed by force leaves the claim's deletion blocked, and the claim says why")
	g.Expect(env.Client.Create(ctx, randomPC())).To(Succeed())
	claim = newClaim("invoices")
	g.Eventually(func(g Gomega) { g.Expect(getPC(g).Finalizers).To(ContainElement(common.InUseFinalizer)) }).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, randomPC())).To(Succeed())
	forced := randomPC()
	g.Expect(updateLatest(ctx, forced, func() { controllerutil.RemoveFinalizer(forced, common.InUseFinalizer) })).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(pc), &terraformv1.ProviderConfig{}))
	}).WithTimeout(timeout).Should(BeTrue())
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced := framework.Condition(claimStatus(g, ctx, claim).Conditions, common.TypeSynced)
		g.Expect(synced.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(synced.Reason).To(Equal("DeletionBlocked"))
		g.Expect(synced.Message).To(ContainSubstring("this claim is deleted once Module " + ns + "/" + claim.Spec.ResourceRef.Name + " is destroyed, and that fails (ProviderNotFound)"))
		g.Expect(synced.Message).To(ContainSubstring("providerconfigs.terraform.terraplane.io " + ns + "/random"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "with the ProviderConfig back, the destroy runs and the claim goes")
	g.Expect(env.Client.Create(ctx, randomPC())).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	}).WithTimeout(timeout).Should(BeTrue())
	g.Eventually(func(g Gomega) {
		pc := getPC(g)
		g.Expect(pc.Status.Users).To(BeZero())
		g.Expect(framework.Condition(pc.Status.Conditions, common.TypeInUse).Reason).To(Equal("Unused"))
	}).WithTimeout(timeout).Should(Succeed())
}
