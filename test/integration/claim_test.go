package integration

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

const (
	adminNS = "terraplane-system"
	wait    = 30 * time.Second
)

// setup makes an app namespace and an S3BucketClass whose Provider "missing" does not exist.
func setup(ctx context.Context, g Gomega, appNS string, policy common.ReclaimPolicy) *awsstoragev1.S3BucketClass {
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	cls := framework.S3BucketClass(adminNS, appNS+"-s3", "missing", policy, appNS)
	g.Expect(env.Client.Create(ctx, cls)).To(Succeed())
	return cls
}

func synced(g Gomega, ctx context.Context, b *storagev1.Bucket) metav1.Condition {
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
	return framework.Condition(b.Status.Conditions, common.TypeSynced)
}

func TestDefaultClass(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	cls := setup(ctx, g, "int-default", common.ReclaimDelete)

	claim := framework.Bucket("int-default", "b", "", "")
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := synced(g, ctx, claim)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal("NoDefaultClass"))
		g.Expect(c.Message).To(ContainSubstring(`terraplane.io/default=true`))
	}).WithTimeout(wait).Should(Succeed())
	g.Expect(claim.Status.BindingPhase).To(Equal(common.BindingPhaseUnbound))

	// No hot loop: the problem is retried but reported once.
	time.Sleep(5 * time.Second)
	events, err := env.Events(ctx, claim)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(events).To(HaveLen(1))
	g.Expect(events[0].Reason).To(Equal("NoDefaultClass"))
	g.Expect(events[0].Count).To(BeNumerically("<", 3), "retries every 2s must not emit an event each")

	// The admin adds a default class; the claim recovers by itself.
	g.Expect(env.Client.Create(ctx, framework.BucketClass("int-default", "a", cls, true))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(claim.Spec.ClassRef).NotTo(BeNil())
		g.Expect(claim.Spec.ClassRef.Name).To(Equal("a"))
		g.Expect(claim.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
	}).WithTimeout(wait).Should(Succeed())
}

func TestMultipleDefaultClasses(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	cls := setup(ctx, g, "int-defaults", common.ReclaimDelete)
	a := framework.BucketClass("int-defaults", "a", cls, true)
	b := framework.BucketClass("int-defaults", "b", cls, true)
	g.Expect(env.Client.Create(ctx, a)).To(Succeed())
	g.Expect(env.Client.Create(ctx, b)).To(Succeed())

	claim := framework.Bucket("int-defaults", "c", "", "")
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := synced(g, ctx, claim)
		g.Expect(c.Reason).To(Equal("MultipleDefaultClasses"))
		g.Expect(c.Message).To(And(ContainSubstring("a, b"), ContainSubstring("keep exactly one")))
	}).WithTimeout(wait).Should(Succeed())
	g.Expect(claim.Status.BindingPhase).To(Equal(common.BindingPhaseUnbound))

	// The admin fixes the labels; the claim recovers by itself.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
	b.Labels = nil
	g.Expect(env.Client.Update(ctx, b)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(claim.Spec.ClassRef).NotTo(BeNil())
		g.Expect(claim.Spec.ClassRef.Name).To(Equal("a"))
		g.Expect(claim.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
	}).WithTimeout(wait).Should(Succeed())
}

func TestDynamicProvisioningAndBadProvider(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	cls := setup(ctx, g, "int-dynamic", common.ReclaimRetain)
	cls.SpecTemplate.ForProvider.Tags = map[string]string{"tier": "gold"}
	g.Expect(env.Client.Update(ctx, cls)).To(Succeed())
	g.Expect(env.Client.Create(ctx, framework.BucketClass("int-dynamic", "standard", cls, false))).To(Succeed())
	g.Expect(env.Client.Create(ctx, framework.BucketClass("int-dynamic", "large", cls, false))).To(Succeed())

	claim := framework.Bucket("int-dynamic", "data", "large", "data-s3")
	claim.Spec.Versioning = true
	claim.Spec.Tags = map[string]string{"team": "x"}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())

	mg := &awsstoragev1.S3Bucket{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(claim.Spec.ResourceRef).NotTo(BeNil())
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: claim.Spec.ResourceRef.Name}, mg)).To(Succeed())
	}).WithTimeout(wait).Should(Succeed())
	g.Expect(mg.Spec.ClaimRef.Name).To(Equal("data"))
	g.Expect(mg.Spec.ClaimRef.UID).To(Equal(claim.UID))
	g.Expect(mg.Spec.ClassRef.Name).To(Equal(cls.Name))
	g.Expect(mg.Spec.ReclaimPolicy).To(Equal(common.ReclaimRetain))
	g.Expect(mg.Spec.ProviderRef.Name).To(Equal("missing"))
	g.Expect(mg.Spec.ForProvider.Versioning).To(BeTrue())
	g.Expect(mg.Spec.ForProvider.ForceDestroy).To(BeTrue())
	g.Expect(mg.Spec.ForProvider.Tags).To(Equal(map[string]string{"tier": "gold", "team": "x"}))
	g.Expect(mg.Spec.ForProvider.BucketName).To(HavePrefix("int-dynamic-data-"))

	// The class points at a Provider that does not exist: Synced=False, actionable, on both.
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		c := framework.Condition(mg.Status.Conditions, common.TypeSynced)
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal("ProviderNotFound"))
		g.Expect(c.Message).To(ContainSubstring("terraplane-system/missing"))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(claim.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
		ready := framework.Condition(claim.Status.Conditions, common.TypeReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal("ProviderNotFound"))
	}).WithTimeout(wait).Should(Succeed())

	// A Provider whose credentials Secret is missing.
	g.Expect(env.Client.Create(ctx, framework.S3Provider(adminNS, "missing", "no-such-secret", "http://127.0.0.1:1"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		c := framework.Condition(mg.Status.Conditions, common.TypeSynced)
		g.Expect(c.Reason).To(Equal("CredentialsSecretNotFound"))
		g.Expect(c.Message).To(ContainSubstring("no-such-secret"))
	}).WithTimeout(wait).Should(Succeed())
	events, err := env.Events(ctx, mg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(events)).To(BeNumerically("<=", 2), "one event per distinct problem: %v", events)

	// Editing the claim's portable fields reaches the resource.
	g.Eventually(func() error { // the claim controller may write the claim in between
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
			return err
		}
		claim.Spec.Tags = map[string]string{"team": "y"}
		return env.Client.Update(ctx, claim)
	}).WithTimeout(wait).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		g.Expect(mg.Spec.ForProvider.Tags).To(HaveKeyWithValue("team", "y"))
	}).WithTimeout(wait).Should(Succeed())

	// Retain: deleting the claim leaves the resource Released.
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim))).To(BeTrue())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		g.Expect(mg.Status.BindingPhase).To(Equal(common.BindingPhaseReleased))
	}).WithTimeout(wait).Should(Succeed())
}

func TestStaticBinding(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	setup(ctx, g, "int-static", common.ReclaimDelete)

	mg := &awsstoragev1.S3Bucket{
		ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "existing-bucket"},
		Spec: awsstoragev1.S3BucketSpec{
			ManagedSpec: common.ManagedSpec{ProviderRef: &common.LocalReference{Name: "missing"}, ReclaimPolicy: common.ReclaimDelete},
			ForProvider: awsstoragev1.S3BucketParameters{BucketName: "existing-bucket"},
		},
	}
	mg.Spec.AllowedNamespaces = framework.Allow("int-static") // its claims may bind it
	g.Expect(env.Client.Create(ctx, mg)).To(Succeed())
	ref := &common.ObjectReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3Bucket", Name: mg.Name, Namespace: adminNS}

	first := framework.Bucket("int-static", "first", "", "")
	first.Spec.ResourceRef = ref
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		g.Expect(mg.Spec.ClaimRef).NotTo(BeNil())
		g.Expect(mg.Spec.ClaimRef.UID).To(Equal(first.UID))
		g.Expect(mg.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(first), first)).To(Succeed())
		g.Expect(first.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
	}).WithTimeout(wait).Should(Succeed())
	g.Expect(first.Spec.ClassRef).To(BeNil(), "a statically bound claim gets no class")
	g.Expect(mg.Spec.ForProvider.BucketName).To(Equal("existing-bucket"), "static resources keep the admin's spec")

	second := framework.Bucket("int-static", "second", "", "")
	second.Spec.ResourceRef = ref
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	g.Eventually(func(g Gomega) {
		c := synced(g, ctx, second)
		g.Expect(c.Reason).To(Equal("ResourceBoundElsewhere"))
		g.Expect(c.Message).To(ContainSubstring("int-static/first"))
	}).WithTimeout(wait).Should(Succeed())
	g.Expect(second.Status.BindingPhase).To(Equal(common.BindingPhaseUnbound))

	// Delete policy: deleting the claim deletes the resource (nothing was applied, so nothing to destroy).
	g.Expect(env.Client.Delete(ctx, first)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(first), first))).To(BeTrue())
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg))).To(BeTrue())
	}).WithTimeout(wait).Should(Succeed())
}
