package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

// configMapClass is an ObjectClass whose Objects are ConfigMaps in namespace ns of the
// cluster ProviderConfig pc reaches, with the claim's storageGB patched into data.size.
func configMapClass(ns, name, pc string, policy common.ReclaimPolicy) *kubernetesv1.ObjectClass {
	c := &kubernetesv1.ObjectClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	c.SpecTemplate.ProviderRef = &common.LocalReference{Name: pc}
	c.SpecTemplate.ReclaimPolicy = policy
	c.SpecTemplate.ForProvider.Manifest = object("v1", "ConfigMap", ns, name, map[string]any{"data": map[string]any{"size": "unset"}})
	c.SpecTemplate.Patches = []kubernetesv1.ObjectPatch{{FromFieldPath: "spec.storageGB", ToFieldPath: "data.size", Format: "%vGi"}}
	return c
}

// selfProviderConfig registers the control plane itself as a target cluster in ns.
func selfProviderConfig(t *testing.T, ctx context.Context, ns, name string) {
	t.Helper()
	g := NewWithT(t)
	self, err := os.ReadFile(env.ControlPlane.Kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, kubeconfigSecret(ns, name+"-kubeconfig", self))).To(Succeed())
	g.Expect(env.Client.Create(ctx, providerConfig(ns, name, name+"-kubeconfig"))).To(Succeed())
}

// updateLatest applies change to the latest copy of obj (read into obj) and writes it,
// retrying on conflicts.
func updateLatest(ctx context.Context, obj client.Object, change func()) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return env.Client.Update(ctx, obj)
	})
}

// requestPlan asks for a plan of obj now: a new requested-at annotation.
func requestPlan(ctx context.Context, obj client.Object) error {
	return updateLatest(ctx, obj, func() {
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[common.RequestedAtAnnotation] = time.Now().Format(time.RFC3339Nano)
		obj.SetAnnotations(ann)
	})
}

// editClaim applies change to the latest copy of claim.
func editClaim(ctx context.Context, claim *databasev1.PostgreSQLInstance, change func(*databasev1.PostgreSQLInstance)) error {
	return updateLatest(ctx, claim, func() { change(claim) })
}

// remoteSize is data.size of the ConfigMap an Object made in the control plane.
func remoteSize(g Gomega, ctx context.Context, ns, name string) string {
	cm, err := remoteObject(ctx, env.Client, "v1", "ConfigMap", ns, name)
	g.Expect(err).NotTo(HaveOccurred())
	size, _, _ := unstructured.NestedString(cm.Object, "data", "size")
	return size
}

// TestClaimClassAndResourceRefs: a bound claim's classRef and resourceRef cannot be
// edited; a deleted class shows on the claim (its resource keeps running, its edits
// wait) until the class is back or the claim names another; a static claim's resourceRef
// can be fixed while it is unbound.
func TestClaimClassAndResourceRefs(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-claim-refs"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	selfProviderConfig(t, ctx, ns, "self")
	startWorkloadManager(t)
	deleteOC, retainOC := configMapClass(ns, "cm-delete", "self", common.ReclaimDelete), configMapClass(ns, "cm-retain", "self", common.ReclaimRetain)
	for _, o := range []client.Object{deleteOC, retainOC, pgClass(ns, "gold", deleteOC, ""), pgClass(ns, "silver", retainOC, "")} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}

	By(t, "a bound claim's classRef and resourceRef edits are refused, saying why")
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}}
	claim.Spec.ClassRef = &common.LocalReference{Name: "gold"}
	claim.Spec.StorageGB = 10
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	waitClaimReady(g, ctx, claim)
	o, cm := boundObject(g, ctx, claim)
	g.Expect(remoteSize(g, ctx, ns, cm)).To(Equal("10Gi"))
	err := editClaim(ctx, claim, func(c *databasev1.PostgreSQLInstance) { c.Spec.ClassRef.Name = "silver" })
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.classRef is immutable once the claim is Bound"))
	err = editClaim(ctx, claim, func(c *databasev1.PostgreSQLInstance) { c.Spec.ResourceRef.Name = "another" })
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.resourceRef is immutable once the claim is Bound"))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
	g.Expect(o.Spec.ReclaimPolicy).To(Equal(common.ReclaimDelete), "the resource's reclaim policy is what gold says")

	By(t, "a deleted class shows on the claim; the resource keeps running and the claim's edit waits")
	g.Expect(env.Client.Delete(ctx, pgClass(ns, "gold", deleteOC, ""))).To(Succeed())
	g.Expect(editClaim(ctx, claim, func(c *databasev1.PostgreSQLInstance) { c.Spec.StorageGB = 20 })).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := claimStatus(g, ctx, claim)
		synced := framework.Condition(st.Conditions, common.TypeSynced)
		g.Expect(synced.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(synced.Reason).To(Equal("ClassNotFound"))
		g.Expect(synced.Message).To(ContainSubstring("PostgreSQLInstanceClass gold (spec.classRef) no longer exists in namespace e2e-claim-refs"))
		g.Expect(synced.Message).To(ContainSubstring("re-create PostgreSQLInstanceClass gold, or set spec.classRef.name to another"))
		g.Expect(framework.Condition(st.Conditions, common.TypeStalled).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(st.BindingPhase).To(Equal(common.BindingPhaseBound))
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(remoteSize(g, ctx, ns, cm)).To(Equal("10Gi"))
		g.Expect(framework.Condition(claimStatus(g, ctx, claim).Conditions, common.TypeSynced).Reason).To(Equal("ClassNotFound"))
	}).WithTimeout(3 * time.Second).Should(Succeed())

	By(t, "the class back under its name lets the edit through")
	g.Expect(env.Client.Create(ctx, pgClass(ns, "gold", deleteOC, ""))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(remoteSize(g, ctx, ns, cm)).To(Equal("20Gi"))
		st := claimStatus(g, ctx, claim)
		g.Expect(framework.Condition(st.Conditions, common.TypeSynced).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(framework.Condition(st.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(st.ObservedGeneration).To(Equal(claim.Generation))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "while its class is missing, a bound claim may name another class")
	g.Expect(env.Client.Delete(ctx, pgClass(ns, "gold", deleteOC, ""))).To(Succeed())
	g.Expect(env.Client.Create(ctx, pgClass(ns, "gold-v2", deleteOC, ""))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(framework.Condition(claimStatus(g, ctx, claim).Conditions, common.TypeSynced).Reason).To(Equal("ClassNotFound"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(editClaim(ctx, claim, func(c *databasev1.PostgreSQLInstance) {
		c.Spec.ClassRef.Name = "gold-v2"
		c.Spec.StorageGB = 30
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(remoteSize(g, ctx, ns, cm)).To(Equal("30Gi"))
		g.Expect(framework.Condition(claimStatus(g, ctx, claim).Conditions, common.TypeSynced).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "static binding: resourceRef can be fixed while the claim is unbound, not after")
	static := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "static"}}
	static.Spec.ProviderRef = &common.LocalReference{Name: "self"}
	static.Spec.ForProvider.Manifest = object("v1", "ConfigMap", ns, "static-cm", nil)
	g.Expect(env.Client.Create(ctx, static)).To(Succeed())
	byHand := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-hand"}}
	byHand.Spec.ResourceRef = &common.ObjectReference{APIVersion: kubernetesv1.GroupVersion.String(), Kind: "Object", Namespace: ns, Name: "statik"}
	g.Expect(env.Client.Create(ctx, byHand)).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := claimStatus(g, ctx, byHand)
		g.Expect(framework.Condition(st.Conditions, common.TypeSynced).Reason).To(Equal("ResourceNotFound"))
		g.Expect(st.BindingPhase).To(Equal(common.BindingPhaseUnbound))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(editClaim(ctx, byHand, func(c *databasev1.PostgreSQLInstance) { c.Spec.ResourceRef.Name = "static" })).To(Succeed())
	waitClaimReady(g, ctx, byHand)
	err = editClaim(ctx, byHand, func(c *databasev1.PostgreSQLInstance) { c.Spec.ResourceRef.Name = "statik" })
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)

	for _, c := range []client.Object{claim, byHand} {
		g.Expect(env.Client.Delete(ctx, c)).To(Succeed())
	}
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)) &&
			apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(byHand), byHand))
	}).WithTimeout(timeout).Should(BeTrue())
}
