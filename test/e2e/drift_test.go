package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/tags"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
)

// TestBucketDrift changes a MinIO bucket's tags behind Terraplane's back: the periodic
// plan finds it (DriftDetected) and corrects it (DriftCorrected); with managementPolicies
// ["Observe"] on the class, drift is reported (condition Drifted, event, metric) and the
// bucket is left as it is.
func TestBucketDrift(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-drift"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, framework.CredentialsSecret(adminNS, "minio-creds", minioUser, minioPassword)))).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, framework.S3Provider(adminNS, "minio", "minio-creds", minioServer.Endpoint)))).To(Succeed())
	class := framework.S3BucketClass(adminNS, "drift-watch", "minio", common.ReclaimDelete, ns)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, framework.BucketClass(ns, "standard", class, true))).To(Succeed())
	port, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := env.StartManager(t.TempDir(), app.Options{DriftInterval: 15 * time.Second,
		MetricsAddr: fmt.Sprintf("127.0.0.1:%d", port), MetricsSecure: false})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)

	claim := framework.Bucket(ns, "logs", "", "logs-s3")
	claim.Spec.Tags = map[string]string{"team": "a"}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	kept := framework.Bucket(ns, "kept", "", "")
	g.Expect(env.Client.Create(ctx, kept)).To(Succeed())
	waitBound(g, ctx, claim)
	waitBound(g, ctx, kept)
	mg, keptMG := managedOf(g, ctx, claim), managedOf(g, ctx, kept)
	bucket, keptBucket := mg.Spec.ForProvider.BucketName, keptMG.Spec.ForProvider.BucketName
	mc := adminS3(g)

	By(t, "a drift check that follows a plan without changes rereads the bucket, and runs no terraform")
	for range 2 { // the first check after the create plans; the next may reread
		g.Expect(requestPlan(ctx, mg)).To(Succeed())
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
			g.Expect(mg.Status.Terraform.LastHandledRequest).To(Equal(mg.Annotations[common.RequestedAtAnnotation]))
		}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	}
	g.Expect(runCount(g, metricsURL, "reread")).To(BeNumerically(">", 0), "a drift check answered by a reread")

	By(t, "drift is detected and corrected")
	tagBucket(g, ctx, bucket, "b")
	g.Eventually(func(g Gomega) {
		g.Expect(eventsWith(g, ctx, mg, "DriftCorrected")).NotTo(BeEmpty())
		g.Expect(bucketTeam(g, ctx, bucket)).To(Equal("a"))
	}).WithTimeout(timeout).WithPolling(2 * time.Second).Should(Succeed())
	detected := eventsWith(g, ctx, mg, "DriftDetected")
	g.Expect(detected).NotTo(BeEmpty())
	g.Expect(detected[0]).To(ContainSubstring("module.this.aws_s3_bucket.this"))

	By(t, "with managementPolicies [Observe] drift is reported and left alone")
	g.Expect(updateLatest(ctx, class, func() {
		class.SpecTemplate.ManagementPolicies = []common.ManagementAction{common.ManagementObserve}
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		g.Expect(mg.Spec.ManagementPolicies).To(Equal([]common.ManagementAction{common.ManagementObserve}))
	}).WithTimeout(timeout).Should(Succeed())
	before := driftCount(g, metricsURL)
	tagBucket(g, ctx, bucket, "c")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		drifted := framework.Condition(mg.Status.Conditions, common.TypeDrifted)
		g.Expect(drifted.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(drifted.Message).To(ContainSubstring("module.this.aws_s3_bucket.this"))
		g.Expect(framework.Condition(mg.Status.Conditions, common.TypeSynced).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(driftCount(g, metricsURL)).To(BeNumerically(">", before))
	}).WithTimeout(timeout).WithPolling(2 * time.Second).Should(Succeed())
	checked := mg.Status.Terraform.LastPlanTime.Time
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		g.Expect(mg.Status.Terraform.LastPlanTime.Time).To(BeTemporally(">", checked))
	}).WithTimeout(timeout).WithPolling(2*time.Second).Should(Succeed(), "the drift interval passes with another plan")
	g.Expect(bucketTeam(g, ctx, bucket)).To(Equal("c"), "observe-only must not correct drift")
	g.Expect(eventsWith(g, ctx, mg, "DriftCorrected")).To(HaveLen(1))
	g.Expect(len(eventsWith(g, ctx, mg, "DriftDetected"))).To(BeNumerically(">", len(detected)), "observe-only drift is an event too")

	By(t, "deleting a claim whose resource only observes leaves its bucket")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(keptMG), keptMG)).To(Succeed())
		g.Expect(keptMG.Spec.ManagementPolicies).To(Equal([]common.ManagementAction{common.ManagementObserve}))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, kept)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(keptMG), keptMG))
	}).WithTimeout(timeout).Should(BeTrue(), "the S3Bucket goes")
	exists, err := mc.BucketExists(ctx, keptBucket)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeTrue(), "an observe-only resource never destroys")
	g.Expect(mc.RemoveBucket(ctx, keptBucket)).To(Succeed())

	By(t, "back to [*], the claim deletes the bucket")
	g.Expect(updateLatest(ctx, class, func() {
		class.SpecTemplate.ManagementPolicies = nil
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		g.Expect(mg.Spec.ManagementPolicies).To(BeEmpty())
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg))
	}).WithTimeout(timeout).Should(BeTrue(), "the S3Bucket is destroyed and gone")
	g.Expect(eventsWith(g, ctx, mg, "Destroyed")).To(ContainElement(ContainSubstring("terraform destroyed")))
	exists, err = mc.BucketExists(ctx, bucket)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeFalse())
}

// tagBucket sets the bucket's team tag through the S3 API, behind Terraplane's back.
func tagBucket(g Gomega, ctx context.Context, bucket, team string) {
	tg, err := tags.NewTags(map[string]string{"team": team}, false)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(adminS3(g).SetBucketTagging(ctx, bucket, tg)).To(Succeed())
}

// bucketTeam reads the bucket's team tag through the S3 API.
func bucketTeam(g Gomega, ctx context.Context, bucket string) string {
	tg, err := adminS3(g).GetBucketTagging(ctx, bucket)
	g.Expect(err).NotTo(HaveOccurred())
	return tg.ToMap()["team"]
}

// driftCount scrapes terraplane_drift_detected_total for S3Bucket.
func driftCount(g Gomega, url string) float64 {
	return max(0, scrapeMetric(g, url, `terraplane_drift_detected_total{group="storage.aws.terraplane.io",kind="S3Bucket"}`))
}

// runCount scrapes how many terraform commands of verb the S3Bucket controller ran
// successfully (terraplane_terraform_run_seconds_count); verb reread counts drift
// checks answered without terraform.
func runCount(g Gomega, url, verb string) float64 {
	return max(0, scrapeMetric(g, url, fmt.Sprintf(`terraplane_terraform_run_seconds_count{group="storage.aws.terraplane.io",kind="S3Bucket",result="success",verb=%q}`, verb)))
}
