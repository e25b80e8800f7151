package e2e

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// TestClassRenameRefused edits a bucket class's forProvider.bucketName, which would
// replace every bucket made from it (and, with forceDestroy, their objects). The API
// server refuses the change on the bound S3Bucket, the claim says so, and the bucket and
// its object are still there.
func TestClassRenameRefused(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-rename"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, framework.CredentialsSecret(adminNS, "minio-creds", minioUser, minioPassword)))).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, framework.S3Provider(adminNS, "minio", "minio-creds", minioServer.Endpoint)))).To(Succeed())
	class := framework.S3BucketClass(adminNS, "rename-me", "minio", common.ReclaimDelete, ns)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, framework.BucketClass(ns, "standard", class, true))).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "a bucket with an object in it")
	claim := framework.Bucket(ns, "photos", "", "photos-s3")
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	waitBound(g, ctx, claim)
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "photos-s3"}, secret)).To(Succeed())
	bucket := string(secret.Data["bucket"])
	mc := adminS3(g)
	_, err = mc.PutObject(ctx, bucket, "keep.txt", bytes.NewReader([]byte("keep")), 4, minio.PutObjectOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	By(t, "renaming the bucket through the class is refused on the claim, and nothing is replaced")
	g.Expect(updateLatest(ctx, class, func() {
		class.SpecTemplate.ForProvider.BucketName = "renamed-by-class"
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		synced := framework.Condition(claim.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal("ChangeRefused"))
		g.Expect(synced.Message).To(ContainSubstring("forProvider.bucketName is immutable"))
		g.Expect(framework.Condition(claim.Status.Conditions, common.TypeStalled).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	g.Consistently(func(g Gomega) {
		mg := managedOf(g, ctx, claim)
		g.Expect(mg.Spec.ForProvider.BucketName).To(Equal(bucket))
		obj, err := mc.StatObject(ctx, bucket, "keep.txt", minio.StatObjectOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(obj.Size).To(BeEquivalentTo(4))
		exists, err := mc.BucketExists(ctx, "renamed-by-class")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(exists).To(BeFalse())
	}).WithTimeout(5 * time.Second).WithPolling(time.Second).Should(Succeed())
}
