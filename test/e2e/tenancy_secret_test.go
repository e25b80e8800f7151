package e2e

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// TestTenantConnectionSecrets: alice, who has rights in tenant-a only, cannot use a
// managed resource's connection Secret to reach another namespace. Reading: her Module,
// once Ready, names the admin's credentials as its connection Secret, and the Bucket claim
// bound to it copies nothing from them into her namespace; deleting the Module leaves them
// alone. Planting: her Module that would write its connection Secret into tenant-b is
// refused (ReferenceNotAllowed, one event) and no Secret appears there.
func TestTenantConnectionSecrets(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	alice, err := env.Tenant(ctx, "alice", "tenant-a")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Namespace(ctx, "tenant-b")).To(Succeed())
	rights := tenantRights(g, ctx, alice)
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "tenancy-aws-credentials"},
		Data: map[string][]byte{"aws_secret_access_key": []byte("the-admin's-key")}}
	g.Expect(env.Client.Create(ctx, creds)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: "tenancy-secret-module"}, Data: tenancyModule}
	g.Expect(alice.Client.Create(ctx, own)).To(Succeed())
	module := func(name string, secret common.SecretReference) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: name}}
		m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: own.Name}}
		m.Spec.ReclaimPolicy = common.ReclaimDelete
		m.Spec.WriteConnectionSecretToRef = &secret
		return m
	}

	t.Run("read", func(t *testing.T) {
		g := NewWithT(t)
		m := module("loot", common.SecretReference{Name: "loot-conn"})
		g.Expect(alice.Client.Create(ctx, m)).To(Succeed())
		claim := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: "loot"}}
		claim.Spec.ResourceRef = &common.ObjectReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "Module",
			Namespace: m.Namespace, Name: m.Name}
		claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "loot"}
		g.Expect(alice.Client.Create(ctx, claim)).To(Succeed())
		waitClaimReady(g, ctx, claim)
		loot := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: "loot"}}
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(loot), loot)).To(Succeed())
			g.Expect(loot.Data).To(HaveKey("endpoint"))
		}).WithTimeout(timeout).Should(Succeed())

		By(t, "alice points her Ready Module's connection Secret at the admin's credentials")
		g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := alice.Client.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
				return err
			}
			m.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: creds.Name, Namespace: adminNS}
			return alice.Client.Update(ctx, m)
		})).To(Succeed())
		refusedOnceObj(g, ctx, m, func() []metav1.Condition { return m.Status.Conditions }, adminNS)
		refusedOnceObj(g, ctx, claim, func() []metav1.Condition { return claim.Status.Conditions }, adminNS)
		g.Consistently(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(loot), loot)).To(Succeed())
			g.Expect(loot.Data).NotTo(HaveKey("aws_secret_access_key"), "the admin's credentials reached alice's namespace")
			g.Expect(alice.Client.Get(ctx, client.ObjectKeyFromObject(creds), &corev1.Secret{})).To(Satisfy(apierrors.IsForbidden))
		}).WithTimeout(5 * time.Second).Should(Succeed())
		untouched(g, ctx, creds)

		By(t, "deleting her claim and Module leaves the admin's credentials alone")
		g.Expect(alice.Client.Delete(ctx, claim)).To(Succeed())
		g.Expect(client.IgnoreNotFound(alice.Client.Delete(ctx, m))).To(Succeed()) // the claim's deletion may have deleted it
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m))
		}).WithTimeout(timeout).Should(BeTrue())
		untouched(g, ctx, creds)
	})

	t.Run("plant", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(alice.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-b", Name: "db-credentials"}})).
			To(Satisfy(apierrors.IsForbidden), "alice may not write Secrets in tenant-b herself")
		m := module("plant", common.SecretReference{Name: "db-credentials", Namespace: "tenant-b"})
		g.Expect(alice.Client.Create(ctx, m)).To(Succeed())
		refusedOnceObj(g, ctx, m, func() []metav1.Condition { return m.Status.Conditions }, "tenant-b")
		g.Consistently(func(g Gomega) {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: "tenant-b", Name: "db-credentials"}, &corev1.Secret{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a Secret was planted in tenant-b: %v", err)
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
			g.Expect(m.Status.Terraform.LastApplyTime).To(BeNil(), "the refused Module ran")
		}).WithTimeout(5 * time.Second).Should(Succeed())
		g.Expect(alice.Client.Delete(ctx, m)).To(Succeed())
	})

	By(t, "alice's rights are what they were")
	g.Expect(tenantRights(g, ctx, alice)).To(Equal(rights))
}

// refusedOnceObj waits until obj (whose conditions conds reads after a Get) is
// Synced=False with ReferenceNotAllowed naming namespace, announced by exactly one event.
func refusedOnceObj(g Gomega, ctx context.Context, obj client.Object, conds func() []metav1.Condition, namespace string) {
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		synced := framework.Condition(conds(), common.TypeSynced)
		g.Expect(synced.Status).To(Equal(metav1.ConditionFalse), "%s %s", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName())
		g.Expect(synced.Reason).To(Equal(common.ReasonReferenceNotAllowed), "%s: %+v", obj.GetName(), synced)
		g.Expect(synced.Message).To(ContainSubstring(namespace))
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		events, err := env.Events(ctx, obj)
		g.Expect(err).NotTo(HaveOccurred())
		var refused []corev1.Event
		for _, e := range events {
			if e.Reason == common.ReasonReferenceNotAllowed {
				refused = append(refused, e)
			}
		}
		g.Expect(refused).To(HaveLen(1), "%s", obj.GetName())
		g.Expect(refused[0].Count).To(BeNumerically("<=", 1))
	}).WithTimeout(10 * time.Second).Should(Succeed())
}

// untouched checks that Secret s is still there, the same object with the same data and
// no owner or label a resource would have put on it.
func untouched(g Gomega, ctx context.Context, s *corev1.Secret) {
	got := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s), got)).To(Succeed(), "Secret %s is gone", s.Name)
	g.Expect(got.UID).To(Equal(s.UID))
	g.Expect(got.Data).To(Equal(s.Data))
	g.Expect(got.OwnerReferences).To(BeEmpty())
	g.Expect(got.Labels).To(BeEmpty())
}
