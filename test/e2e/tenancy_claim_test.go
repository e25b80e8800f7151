package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// tenancyModule needs no provider: one terraform_data and an output.
var tenancyModule = map[string]string{"main.tf": `
variable "name" {
  type    = string
  default = "tenant"
}
resource "terraform_data" "this" { input = var.name }
output "endpoint" { value = terraform_data.this.output }
`}

// TestTenantClaimReferences: alice, who has rights in tenant-a only, cannot reach into
// other namespaces through a claim or a Module: a static resourceRef to an unreserved
// resource in the admin namespace, a portable class pointing at an admin class that does
// not consent, and a variablesFrom Secret in a third namespace are refused with
// ReferenceNotAllowed; a connection Secret she names that her claim does not control is
// neither overwritten nor deleted; and her rights are the same afterwards.
func TestTenantClaimReferences(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	alice, err := env.Tenant(ctx, "alice", "tenant-a")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Namespace(ctx, "tenant-b")).To(Succeed())
	rights := tenantRights(g, ctx, alice)
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "an admin publishes a module, a class that consents to tenant-a and one that consents to nobody")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "tenancy-module"}, Data: tenancyModule}
	src := terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}}
	closed := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "tenancy-closed"}}
	closed.SpecTemplate.Source, closed.SpecTemplate.ReclaimPolicy = src, common.ReclaimDelete
	open := closed.DeepCopy()
	open.Name, open.AllowedNamespaces = "tenancy-open", &common.AllowedNamespaces{Names: []string{alice.Namespace}}
	unreserved := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "tenancy-unreserved"}}
	unreserved.Spec.Source, unreserved.Spec.ReclaimPolicy = src, common.ReclaimDelete
	for _, o := range []client.Object{cm, closed, open, unreserved} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		g.Expect(classReady(g, ctx, open).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(classReady(g, ctx, closed).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())

	t.Run("static resourceRef", func(t *testing.T) {
		g := NewWithT(t)
		claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: "static"}}
		claim.Spec.ResourceRef = &common.ObjectReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "Module",
			Name: unreserved.Name, Namespace: adminNS}
		g.Expect(alice.Client.Create(ctx, claim)).To(Succeed())
		refusedOnce(g, ctx, claim, "spec.resourceRef")
		g.Consistently(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(unreserved), unreserved)).To(Succeed())
			g.Expect(unreserved.Spec.ClaimRef).To(BeNil(), "the admin's resource was bound to alice's claim")
			g.Expect(claimStatus(g, ctx, claim).BindingPhase).NotTo(Equal(common.BindingPhaseBound))
		}).WithTimeout(3 * time.Second).Should(Succeed())

		By(t, "once the admin reserves the resource for the claim, it binds")
		g.Expect(updateLatest(ctx, unreserved, func() {
			unreserved.Spec.ClaimRef = &common.ObjectReference{APIVersion: databasev1.GroupVersion.String(), Kind: "PostgreSQLInstance",
				Namespace: claim.Namespace, Name: claim.Name}
		})).To(Succeed())
		waitClaimReady(g, ctx, claim)
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(unreserved), unreserved)).To(Succeed())
		g.Expect(unreserved.Spec.ClaimRef.UID).To(Equal(claim.UID))
	})

	t.Run("portable class", func(t *testing.T) {
		g := NewWithT(t)
		portable := &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: "sneaky"},
			ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: closed.Name, Namespace: adminNS}}
		claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: "sneaky"}}
		claim.Spec.ClassRef = &common.LocalReference{Name: portable.Name}
		for _, o := range []client.Object{portable, claim} {
			g.Expect(alice.Client.Create(ctx, o)).To(Succeed())
		}
		refusedOnce(g, ctx, claim, "classRef")
		g.Expect(claim.Spec.ResourceRef).To(BeNil(), "no resource may be made from a class that does not consent")
		modules := &terraformv1.ModuleList{}
		g.Expect(env.Client.List(ctx, modules, client.InNamespace(adminNS))).To(Succeed())
		for _, m := range modules.Items {
			g.Expect(m.Spec.ClassRef == nil || m.Spec.ClassRef.Name != closed.Name).To(BeTrue(), "Module %s was made from %s", m.Name, closed.Name)
		}
	})

	t.Run("variablesFrom", func(t *testing.T) {
		g := NewWithT(t)
		bob := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-b", Name: "bob-token"}, StringData: map[string]string{"token": "bob-s3cr3t"}}
		bobClaim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-b", Name: "bobs"}}
		bobClaim.Spec.ResourceRef = &common.ObjectReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "Module",
			Namespace: "tenant-b", Name: "bobs-own"}
		g.Expect(env.Client.Create(ctx, bob)).To(Succeed())
		g.Expect(env.Client.Create(ctx, bobClaim)).To(Succeed())
		own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: "tenancy-module"}, Data: tenancyModule}
		g.Expect(alice.Client.Create(ctx, own)).To(Succeed())
		thief := func(name string) *terraformv1.Module {
			m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: name}}
			m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: own.Name}}
			m.Spec.ReclaimPolicy = common.ReclaimDelete
			m.Spec.VariablesFrom = []terraformv1.VariableFrom{{Name: "name", ValueFrom: terraformv1.VariableSource{
				SecretKeyRef: &terraformv1.SecretKeySelector{Name: bob.Name, Key: "token", Namespace: bob.Namespace}}}}
			return m
		}
		// The second claims to be bound to bob's claim, which does not name it.
		plain, posing := thief("thief"), thief("thief-posing")
		posing.Spec.ClaimRef = &common.ObjectReference{APIVersion: databasev1.GroupVersion.String(), Kind: "PostgreSQLInstance",
			Namespace: bobClaim.Namespace, Name: bobClaim.Name, UID: bobClaim.UID}
		for _, m := range []*terraformv1.Module{plain, posing} {
			g.Expect(alice.Client.Create(ctx, m)).To(Succeed())
		}
		for _, m := range []*terraformv1.Module{plain, posing} {
			g.Eventually(func(g Gomega) {
				g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
				synced := framework.Condition(m.Status.Conditions, common.TypeSynced)
				g.Expect(synced.Reason).To(Equal(common.ReasonReferenceNotAllowed), "Module %s: %+v", m.Name, synced)
				g.Expect(synced.Message).To(ContainSubstring("tenant-b"))
			}).WithTimeout(timeout).Should(Succeed())
			g.Expect(m.Status.Terraform.Resources).To(BeZero(), "Module %s ran with bob's Secret", m.Name)
		}
	})

	t.Run("connection Secret", func(t *testing.T) {
		g := NewWithT(t)
		precious := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: "precious"},
			Data: map[string][]byte{"password": []byte("hunter2")}}
		g.Expect(env.Client.Create(ctx, precious)).To(Succeed())
		portable := &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: "open"},
			ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: open.Name, Namespace: adminNS}}
		claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: alice.Namespace, Name: "greedy"}}
		claim.Spec.ClassRef = &common.LocalReference{Name: portable.Name}
		claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: precious.Name}
		for _, o := range []client.Object{portable, claim} {
			g.Expect(alice.Client.Create(ctx, o)).To(Succeed())
		}
		var synced metav1.Condition
		conflict := func() bool {
			st := claimStatus(g, ctx, claim)
			synced = framework.Condition(st.Conditions, common.TypeSynced)
			return st.BindingPhase == common.BindingPhaseBound && synced.Reason == common.ReasonConnectionSecretConflict &&
				strings.Contains(synced.Message, precious.Name)
		}
		g.Eventually(func() bool {
			st := claimStatus(g, ctx, claim)
			return st.BindingPhase == common.BindingPhaseBound && framework.Condition(st.Conditions, common.TypeSynced).Status == metav1.ConditionFalse
		}).WithTimeout(timeout).Should(BeTrue(), "the claim never bound, or never tried its connection Secret")
		if !conflict() { // go on: what its deletion does to precious matters most
			t.Errorf("the claim is not Synced=False %s naming precious: %+v", common.ReasonConnectionSecretConflict, synced)
		}
		unchanged := func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(precious), s)).To(Succeed(), "precious is gone")
			g.Expect(s.UID).To(Equal(precious.UID))
			g.Expect(s.Data).To(Equal(precious.Data))
			g.Expect(s.OwnerReferences).To(BeEmpty())
		}
		unchanged(NewGomega(func(msg string, _ ...int) { t.Errorf("%s", msg) })) // go on: see what the deletion does

		By(t, "deleting the claim destroys its resource and leaves precious alone")
		g.Expect(alice.Client.Delete(ctx, claim)).To(Succeed())
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim))
		}).WithTimeout(timeout).Should(BeTrue())
		unchanged(g)
	})

	By(t, "alice's rights are what they were")
	g.Expect(tenantRights(g, ctx, alice)).To(Equal(rights))
}

// refusedOnce waits until claim is Synced=False with ReferenceNotAllowed naming field,
// announced by exactly one event.
func refusedOnce(g Gomega, ctx context.Context, claim *databasev1.PostgreSQLInstance, field string) {
	g.Eventually(func(g Gomega) {
		synced := framework.Condition(claimStatus(g, ctx, claim).Conditions, common.TypeSynced)
		g.Expect(synced.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(synced.Reason).To(Equal(common.ReasonReferenceNotAllowed), "%+v", synced)
		g.Expect(synced.Message).To(ContainSubstring(field))
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		events, err := env.Events(ctx, claim)
		g.Expect(err).NotTo(HaveOccurred())
		var refused []corev1.Event
		for _, e := range events {
			if e.Reason == common.ReasonReferenceNotAllowed {
				refused = append(refused, e)
			}
		}
		g.Expect(refused).To(HaveLen(1))
		g.Expect(refused[0].Count).To(BeNumerically("<=", 1))
	}).WithTimeout(10 * time.Second).Should(Succeed())
}

// tenantRights asks the API server, as the tenant, what it may do with the kinds that
// matter across the namespaces that matter.
func tenantRights(g Gomega, ctx context.Context, tenant *framework.Tenant) map[string]bool {
	type res struct{ group, resource string }
	namespaced := []res{{"", "secrets"}, {"", "configmaps"}, {"rbac.authorization.k8s.io", "rolebindings"},
		{"terraform.terraplane.io", "modules"}, {"terraform.terraplane.io", "moduleclasses"},
		{"terraform.terraplane.io", "providerconfigs"}, {"database.terraplane.io", "postgresqlinstances"}}
	clusterScoped := []res{{"", "namespaces"}, {"rbac.authorization.k8s.io", "clusterrolebindings"},
		{"apiextensions.terraplane.io", "claimdefinitions"}}
	rights := map[string]bool{}
	for _, ns := range []string{tenant.Namespace, "tenant-b", adminNS, "kube-system", ""} {
		resources := namespaced
		if ns == "" {
			resources = clusterScoped
		}
		for _, r := range resources {
			for _, verb := range []string{"get", "list", "create", "update", "delete"} {
				review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
					ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: r.group, Resource: r.resource}}}
				g.Expect(tenant.Client.Create(ctx, review)).To(Succeed())
				allowed := review.Status.Allowed
				rights[fmt.Sprintf("%s %s.%s in %s", verb, r.resource, r.group, ns)] = allowed
				g.Expect(allowed).To(Equal(ns == tenant.Namespace), "%s %s in %s", verb, r.resource, ns)
			}
		}
	}
	return rights
}
