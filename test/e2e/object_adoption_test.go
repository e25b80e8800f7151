package e2e

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

// configMapObject is an Object for ConfigMap name in ns of the cluster ProviderConfig "self" reaches.
func configMapObject(ns, name, configMap string, policy common.ReclaimPolicy) *kubernetesv1.Object {
	o := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	o.Spec.ProviderRef = &common.LocalReference{Name: "self"}
	o.Spec.ReclaimPolicy = policy
	o.Spec.ForProvider.Manifest = object("v1", "ConfigMap", ns, configMap, map[string]any{"data": map[string]any{"by": name}})
	return o
}

// syncedOf reads o's Synced condition.
func syncedOf(g Gomega, ctx context.Context, o *kubernetesv1.Object) metav1.Condition {
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
	return framework.Condition(o.Status.Conditions, common.TypeSynced)
}

// setAdoption sets o's spec.adoptionPolicy.
func setAdoption(ctx context.Context, o *kubernetesv1.Object, policy kubernetesv1.AdoptionPolicy) error {
	return updateLatest(ctx, o, func() { o.Spec.AdoptionPolicy = policy })
}

// TestObjectAdoption: a remote object another Object owns is never taken; once that
// Object is deleted with reclaimPolicy Retain, a new Object takes it over with
// adoptionPolicy Orphaned (the conflict message says so); one Terraplane never made needs
// Always. The ProviderConfig the Objects use cannot be deleted while they exist.
func TestObjectAdoption(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-adoption"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	selfProviderConfig(t, ctx, ns, "self")
	startWorkloadManager(t)

	By(t, "an Object with reclaimPolicy Retain makes the ConfigMap")
	first := configMapObject(ns, "first", "shared", common.ReclaimRetain)
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(syncedOf(g, ctx, first).Status).To(Equal(metav1.ConditionTrue)) }).WithTimeout(timeout).Should(Succeed())

	By(t, "a second Object for the same ConfigMap is refused while the first exists, naming it")
	second := configMapObject(ns, "second", "shared", common.ReclaimDelete)
	second.Spec.AdoptionPolicy = kubernetesv1.AdoptOrphaned
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced := syncedOf(g, ctx, second)
		g.Expect(synced.Reason).To(Equal("RemoteObjectConflict"))
		g.Expect(synced.Message).To(ContainSubstring("ConfigMap e2e-adoption/shared already exists in cluster"))
		g.Expect(synced.Message).To(ContainSubstring("belongs to Object e2e-adoption/first, which still exists; it is never taken over from a live owner: delete Object e2e-adoption/first first"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(setAdoption(ctx, second, kubernetesv1.AdoptNever)).To(Succeed())

	By(t, "the ProviderConfig both use cannot be deleted meanwhile")
	pc := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "self"}}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pc), pc)).To(Succeed())
		g.Expect(pc.Status.Users).To(Equal(2))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, pc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pc), pc)).To(Succeed())
		inUse := framework.Condition(pc.Status.Conditions, common.TypeInUse)
		g.Expect(inUse.Reason).To(Equal("DeletionBlocked"))
		g.Expect(inUse.Message).To(ContainSubstring("used by 2: Object e2e-adoption/first, Object e2e-adoption/second"))
		g.Expect(framework.Condition(pc.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue), "usage and reachability share the conditions")
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "the first Object deleted with Retain leaves the ConfigMap; the message says how to take it over")
	g.Expect(env.Client.Delete(ctx, first)).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced := syncedOf(g, ctx, second)
		g.Expect(synced.Reason).To(Equal("RemoteObjectConflict"))
		g.Expect(synced.Message).To(ContainSubstring("was left behind by a Terraplane object that no longer exists (UID " + string(first.UID) + ")"))
		g.Expect(synced.Message).To(ContainSubstring("set spec.adoptionPolicy: Orphaned on this Object to take it over"))
	}).WithTimeout(timeout).Should(Succeed())
	cm := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shared"}, cm)).To(Succeed())
	g.Expect(cm.Data).To(HaveKeyWithValue("by", "first"), "left untouched")

	By(t, "adoptionPolicy Orphaned takes it over")
	g.Expect(setAdoption(ctx, second, kubernetesv1.AdoptOrphaned)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(syncedOf(g, ctx, second).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shared"}, cm)).To(Succeed())
		g.Expect(cm.Annotations).To(HaveKeyWithValue(common.RemoteOwnerAnnotation, string(second.UID)))
		g.Expect(cm.Data).To(HaveKeyWithValue("by", "second"))
		events, err := env.Events(ctx, second)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(events).To(ContainElement(HaveField("Reason", "Adopted")))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a ConfigMap Terraplane never made needs Always")
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "handmade"}, Data: map[string]string{"by": "hand"}})).To(Succeed())
	third := configMapObject(ns, "third", "handmade", common.ReclaimDelete)
	third.Spec.AdoptionPolicy = kubernetesv1.AdoptOrphaned
	g.Expect(env.Client.Create(ctx, third)).To(Succeed())
	g.Eventually(func(g Gomega) {
		synced := syncedOf(g, ctx, third)
		g.Expect(synced.Reason).To(Equal("RemoteObjectConflict"))
		g.Expect(synced.Message).To(ContainSubstring("was not created by Terraplane; it is left untouched: set spec.adoptionPolicy: Always on this Object to take it over"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(setAdoption(ctx, third, kubernetesv1.AdoptAlways)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(syncedOf(g, ctx, third).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "handmade"}, cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKeyWithValue("by", "third"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "with the Objects gone, the ProviderConfig goes")
	for _, o := range []*kubernetesv1.Object{second, third} {
		g.Expect(env.Client.Delete(ctx, o)).To(Succeed())
	}
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(pc), pc))
	}).WithTimeout(timeout).Should(BeTrue())
}
