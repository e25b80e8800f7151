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

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/test/framework"
)

// goneDriftInterval is how often TestBucketDeletedOutside's controller plans an unchanged
// bucket.
const goneDriftInterval = 15 * time.Second

// oneRun is the most one plan of the bucket takes on a loaded test machine (the aws
// provider refreshes it against MinIO).
const oneRun = 45 * time.Second

// goneAddress is the bucket's address in the S3Bucket's state.
const goneAddress = "module.this.aws_s3_bucket.this"

// TestBucketDeletedOutside deletes an S3Bucket's bucket behind Terraplane's back, on the
// real aws provider against MinIO. The refresh that finds it gone is drift, not lost
// state: the next drift check recreates it (DriftDetected names it, DriftCorrected
// follows). With manual approval the bucket stays gone until the plan is approved, and
// meanwhile the S3Bucket is Ready=False (Missing) and Drifted=True, naming it. A state
// Secret that is itself emptied is still StateMissing, and nothing is created again.
func TestBucketDeletedOutside(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, framework.CredentialsSecret(adminNS, "minio-creds", minioUser, minioPassword)))).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, framework.S3Provider(adminNS, "minio", "minio-creds", minioServer.Endpoint)))).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{DriftInterval: goneDriftInterval})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	mc := adminS3(g)

	mg := &awsstoragev1.S3Bucket{
		ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "gone"},
		Spec: awsstoragev1.S3BucketSpec{
			ManagedSpec: common.ManagedSpec{ProviderRef: &common.LocalReference{Name: "minio"}, ReclaimPolicy: common.ReclaimDelete},
			ForProvider: awsstoragev1.S3BucketParameters{BucketName: "e2e-gone", ForceDestroy: true},
		},
	}
	g.Expect(env.Client.Create(ctx, mg)).To(Succeed())
	waitManagedReady(g, ctx, mg)
	recorded := mg.Status.Terraform.Resources
	g.Expect(recorded).To(BeNumerically(">", 0))
	bucketExists := func() bool {
		ok, err := mc.BucketExists(ctx, "e2e-gone")
		g.Expect(err).NotTo(HaveOccurred())
		return ok
	}

	By(t, "deleted behind Terraplane's back, the bucket is back after a drift check")
	g.Expect(mc.RemoveBucket(ctx, "e2e-gone")).To(Succeed())
	start := time.Now()
	g.Eventually(func(g Gomega) {
		detected := eventsWith(g, ctx, mg, common.ReasonDriftDetected)
		g.Expect(detected).To(ContainElement(And(ContainSubstring("deleted outside Terraform"), ContainSubstring(goneAddress))))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	reported := time.Since(start)
	t.Logf("FIGURE deleted bucket reported as drift after %s (drift interval %s)", reported.Round(time.Second), goneDriftInterval)
	g.Expect(reported).To(BeNumerically("<", goneDriftInterval+oneRun), "drift is reported at the next drift check, within one interval and the plan's own time")
	g.Eventually(bucketExists).WithTimeout(timeout).WithPolling(time.Second).Should(BeTrue(), "recreated: %v", eventsWith(g, ctx, mg, common.ReasonStateMissing))
	t.Logf("deleted bucket recreated after %s (drift interval %s)", time.Since(start).Round(time.Second), goneDriftInterval)
	g.Eventually(func(g Gomega) {
		g.Expect(eventsWith(g, ctx, mg, common.ReasonDriftCorrected)).NotTo(BeEmpty())
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(eventsWith(g, ctx, mg, common.ReasonStateMissing)).To(BeEmpty(), "a refresh that finds the bucket gone is not lost state")
	waitManagedReady(g, ctx, mg)
	waitRepairRecorded(g, ctx, mg, start)
	g.Expect(framework.Condition(mg.Status.Conditions, common.TypeDrifted).Status).To(Equal(metav1.ConditionFalse))

	By(t, "with manual approval, a deleted bucket is Missing and Drifted until its plan is approved")
	g.Expect(updateLatest(ctx, mg, func() { mg.Spec.Approval = common.ApprovalManual })).To(Succeed())
	waitManagedReady(g, ctx, mg)
	g.Expect(mc.RemoveBucket(ctx, "e2e-gone")).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		conds := mg.Status.Conditions
		ready, drifted := framework.Condition(conds, common.TypeReady), framework.Condition(conds, common.TypeDrifted)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse), "%+v", ready)
		g.Expect(ready.Reason).To(Equal(common.ReasonMissing))
		g.Expect(ready.Message).To(ContainSubstring(goneAddress))
		g.Expect(drifted.Status).To(Equal(metav1.ConditionTrue), "%+v", drifted)
		g.Expect(drifted.Message).To(And(ContainSubstring("deleted outside Terraform"), ContainSubstring(goneAddress)))
		g.Expect(framework.Condition(conds, common.TypeSynced).Reason).To(Equal(common.ReasonAwaitingApproval))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	g.Expect(bucketExists()).To(BeFalse(), "nothing is applied before the approval")
	plan := mg.Status.Terraform.Plan
	g.Expect(plan.Reason).To(Equal(common.PlanDrift))
	g.Expect(updateLatest(ctx, mg, func() { mg.Spec.ApprovedPlan = plan.ID })).To(Succeed())
	g.Eventually(bucketExists).WithTimeout(timeout).WithPolling(time.Second).Should(BeTrue())
	waitManagedReady(g, ctx, mg)
	g.Expect(framework.Condition(mg.Status.Conditions, common.TypeDrifted).Status).To(Equal(metav1.ConditionFalse))
	g.Expect(mg.Status.Terraform.Resources).To(Equal(recorded))

	By(t, "a state Secret emptied behind Terraplane's back is StateMissing, and nothing is created again")
	g.Expect(updateLatest(ctx, mg, func() { mg.Spec.Approval, mg.Spec.ApprovedPlan = common.ApprovalAutomatic, "" })).To(Succeed())
	waitManagedReady(g, ctx, mg)
	state := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: resource.StateSecretName(mg)}, state)).To(Succeed())
	state.Data = map[string][]byte{}
	g.Expect(env.Client.Update(ctx, state)).To(Succeed())
	g.Expect(requestPlan(ctx, mg)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		synced := framework.Condition(mg.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal(common.ReasonStateMissing), "%+v", synced)
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	g.Expect(bucketExists()).To(BeTrue())
	g.Expect(framework.Condition(mg.Status.Conditions, common.TypeReady).Reason).NotTo(Equal(common.ReasonMissing),
		"an empty state finds nothing deleted")

	g.Expect(env.Client.Delete(ctx, mg)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg))
	}).WithTimeout(timeout).Should(BeTrue(), "an empty state has nothing to destroy")
	g.Expect(mc.RemoveBucket(ctx, "e2e-gone")).To(Succeed())
}
