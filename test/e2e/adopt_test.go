package e2e

import (
	"bytes"
	"context"
	"testing"

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

func adoptedBucket(name, bucket string, imports ...common.ImportInstruction) *awsstoragev1.S3Bucket {
	return &awsstoragev1.S3Bucket{
		ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name},
		Spec: awsstoragev1.S3BucketSpec{
			ManagedSpec: common.ManagedSpec{ProviderRef: &common.LocalReference{Name: "minio"}, ReclaimPolicy: common.ReclaimRetain, Imports: imports},
			ForProvider: awsstoragev1.S3BucketParameters{BucketName: bucket},
		},
	}
}

// TestAdoptExistingBucket imports a bucket that Terraform never made, and refuses an
// import whose plan would replace what exists.
func TestAdoptExistingBucket(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	setupMinIOClasses(ctx, t, "e2e-adopt")
	admin := adminS3(g)
	for _, b := range []string{"legacy-photos", "legacy-other"} {
		g.Expect(admin.MakeBucket(ctx, b, minio.MakeBucketOptions{})).To(Succeed())
		_, err := admin.PutObject(ctx, b, "keep.txt", bytes.NewReader([]byte("data")), 4, minio.PutObjectOptions{})
		g.Expect(err).NotTo(HaveOccurred())
	}
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "an import that fits is adopted in place")
	mg := adoptedBucket("legacy-photos", "legacy-photos", common.ImportInstruction{Address: "aws_s3_bucket.this", ID: "legacy-photos"})
	g.Expect(env.Client.Create(ctx, mg)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		g.Expect(framework.Condition(mg.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue),
			"%+v", framework.Condition(mg.Status.Conditions, common.TypeSynced))
	}).WithTimeout(timeout).Should(Succeed())
	_, err = admin.StatObject(ctx, "legacy-photos", "keep.txt", minio.StatObjectOptions{})
	g.Expect(err).NotTo(HaveOccurred(), "the adopted bucket was recreated")

	By(t, "an import whose plan would replace the bucket is stopped with the planned actions")
	bad := adoptedBucket("legacy-other", "renamed-bucket", common.ImportInstruction{Address: "aws_s3_bucket.this", ID: "legacy-other"})
	g.Expect(env.Client.Create(ctx, bad)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bad), bad)).To(Succeed())
		synced := framework.Condition(bad.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal("AdoptionRefused"))
		g.Expect(synced.Message).To(ContainSubstring("module.this.aws_s3_bucket.this: delete, create"))
	}).WithTimeout(timeout).Should(Succeed())
	exists, err := admin.BucketExists(ctx, "renamed-bucket")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeFalse(), "nothing may be applied")
	_, err = admin.StatObject(ctx, "legacy-other", "keep.txt", minio.StatObjectOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bad.Status.Terraform.LastApplyTime).To(BeNil())

	By(t, "deleting the refused resource destroys nothing")
	for _, o := range []client.Object{mg, bad} {
		g.Expect(env.Client.Delete(ctx, o)).To(Succeed())
	}
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(bad), bad)) &&
			apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg))
	}).WithTimeout(timeout).Should(BeTrue())
	_, err = admin.StatObject(ctx, "legacy-other", "keep.txt", minio.StatObjectOptions{})
	g.Expect(err).NotTo(HaveOccurred())
}
