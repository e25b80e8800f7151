package e2e

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// TestInterruptedBucketCreate: a named S3Bucket whose create was interrupted adopts the
// bucket that create made, by its name, instead of making it again; when the create
// never got that far, the bucket is simply created.
func TestInterruptedBucketCreate(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	setupMinIOClasses(ctx, t, "e2e-crash-bucket")
	admin := adminS3(g)
	By(t, "the interrupted create made the bucket, and someone put an object in it")
	g.Expect(admin.MakeBucket(ctx, "interrupted-made", minio.MakeBucketOptions{})).To(Succeed())
	_, err := admin.PutObject(ctx, "interrupted-made", "keep.txt", bytes.NewReader([]byte("data")), 4, minio.PutObjectOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	pending := map[string]string{common.CreatePendingAnnotation: time.Now().UTC().Format(time.RFC3339)}
	made := adoptedBucket("interrupted-made", "interrupted-made")
	notMade := adoptedBucket("interrupted-not-made", "interrupted-not-made")
	for _, b := range []*awsstoragev1.S3Bucket{made, notMade} {
		b.Annotations = pending
		b.Spec.ReclaimPolicy = common.ReclaimDelete
		b.Spec.ForProvider.ForceDestroy = true
		g.Expect(env.Client.Create(ctx, b)).To(Succeed())
	}
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	for _, b := range []*awsstoragev1.S3Bucket{made, notMade} {
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
			g.Expect(framework.Condition(b.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue),
				"%+v", framework.Condition(b.Status.Conditions, common.TypeSynced))
			g.Expect(b.Annotations).NotTo(HaveKey(common.CreatePendingAnnotation))
		}).WithTimeout(timeout).Should(Succeed())
	}
	_, err = admin.StatObject(ctx, "interrupted-made", "keep.txt", minio.StatObjectOptions{})
	g.Expect(err).NotTo(HaveOccurred(), "the bucket the interrupted create made was adopted, not made again")
	exists, err := admin.BucketExists(ctx, "interrupted-not-made")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeTrue())

	By(t, "both are Terraplane's now: deleting them removes the buckets")
	for _, b := range []*awsstoragev1.S3Bucket{made, notMade} {
		g.Expect(env.Client.Delete(ctx, b)).To(Succeed())
	}
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(made), made)) &&
			apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(notMade), notMade))
	}).WithTimeout(timeout).Should(BeTrue())
	exists, err = admin.BucketExists(ctx, "interrupted-not-made")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeFalse())
	exists, err = admin.BucketExists(ctx, "interrupted-made")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeFalse())
}
