package e2e

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/test/framework"
)

const (
	adminNS = "terraplane-system"
	timeout = 3 * time.Minute
)

// minioClassesLabel marks the namespaces whose portable classes may use the shared MinIO
// classes: their allowedNamespaces selects it.
const minioClassesLabel = "e2e.terraplane.io/minio-classes"

// setupMinIOClasses creates a Provider for the test MinIO, a Delete and a Retain class
// that consent to namespaces labelled minioClassesLabel, labels appNS so, and creates
// their portable classes in appNS (the Delete one is the default).
func setupMinIOClasses(ctx context.Context, t *testing.T, appNS string) {
	g := NewWithT(t)
	c := env.Client
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS}}
	g.Expect(c.Patch(ctx, ns, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+minioClassesLabel+`":"true"}}}`)))).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(c.Create(ctx, framework.CredentialsSecret(adminNS, "minio-creds", minioUser, minioPassword)))).To(Succeed())
	g.Expect(client.IgnoreAlreadyExists(c.Create(ctx, framework.S3Provider(adminNS, "minio", "minio-creds", minioServer.Endpoint)))).To(Succeed())
	del := framework.S3BucketClass(adminNS, "minio-delete", "minio", common.ReclaimDelete)
	keep := framework.S3BucketClass(adminNS, "minio-retain", "minio", common.ReclaimRetain)
	for _, class := range []*awsstoragev1.S3BucketClass{del, keep} {
		class.AllowedNamespaces = &common.AllowedNamespaces{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{minioClassesLabel: "true"}}}
	}
	for _, o := range []client.Object{del, keep,
		framework.BucketClass(appNS, "standard", del, true),
		framework.BucketClass(appNS, "keep", keep, false)} {
		g.Expect(client.IgnoreAlreadyExists(c.Create(ctx, o))).To(Succeed())
	}
}

// s3 is a MinIO client built only from a claim's connection Secret.
func s3(g Gomega, secret *corev1.Secret) *minio.Client {
	u, err := url.Parse(string(secret.Data["endpoint"]))
	g.Expect(err).NotTo(HaveOccurred())
	mc, err := minio.New(u.Host, &minio.Options{
		Creds:  credentials.NewStaticV4(string(secret.Data["accessKeyID"]), string(secret.Data["secretAccessKey"]), ""),
		Secure: u.Scheme == "https",
		Region: string(secret.Data["region"]),
	})
	g.Expect(err).NotTo(HaveOccurred())
	return mc
}

func adminS3(g Gomega) *minio.Client {
	u, _ := url.Parse(minioServer.Endpoint)
	mc, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(minioUser, minioPassword, "")})
	g.Expect(err).NotTo(HaveOccurred())
	return mc
}

func waitBound(g Gomega, ctx context.Context, b *storagev1.Bucket) {
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		g.Expect(b.Status.BindingPhase).To(Equal(common.BindingPhaseBound))
		g.Expect(framework.Condition(b.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue),
			"Ready: %+v", framework.Condition(b.Status.Conditions, common.TypeReady))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
}

func managedOf(g Gomega, ctx context.Context, b *storagev1.Bucket) *awsstoragev1.S3Bucket {
	mg := &awsstoragev1.S3Bucket{}
	ref := b.Spec.ResourceRef
	g.Expect(ref).NotTo(BeNil())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, mg)).To(Succeed())
	return mg
}

func TestBucketLifecycle(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	setupMinIOClasses(ctx, t, "e2e-bucket")
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "a claim without classRef gets the default class and becomes Bound")
	claim := framework.Bucket("e2e-bucket", "photos", "", "photos-s3")
	claim.Spec.Tags = map[string]string{"team": "a"}
	start := time.Now()
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	waitBound(g, ctx, claim)
	t.Logf("claim Bound and Ready after %s", time.Since(start).Round(100*time.Millisecond))
	g.Expect(claim.Spec.ClassRef.Name).To(Equal("standard"))

	By(t, "the bucket exists in MinIO and takes an object written with the connection details")
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "e2e-bucket", Name: "photos-s3"}, secret)).To(Succeed())
	for _, k := range []string{"endpoint", "bucket", "accessKeyID", "secretAccessKey"} {
		g.Expect(secret.Data).To(HaveKey(k))
	}
	bucket := string(secret.Data["bucket"])
	mc := s3(g, secret)
	exists, err := mc.BucketExists(ctx, bucket)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeTrue())
	_, err = mc.PutObject(ctx, bucket, "hello.txt", bytes.NewReader([]byte("hello")), 5, minio.PutObjectOptions{})
	g.Expect(err).NotTo(HaveOccurred())

	By(t, "a spec change on the claim (versioning, tags) is applied to the bucket")
	g.Expect(updateLatest(ctx, claim, func() {
		claim.Spec.Versioning = true
		claim.Spec.Tags = map[string]string{"team": "b"}
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		v, err := mc.GetBucketVersioning(ctx, bucket)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(v.Status).To(Equal("Enabled"))
		tags, err := mc.GetBucketTagging(ctx, bucket)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(tags.ToMap()).To(HaveKeyWithValue("team", "b"))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())

	By(t, "losing the work directory and restarting the controller loses and recreates nothing")
	g.Eventually(func(g Gomega) {
		mg := managedOf(g, ctx, claim)
		g.Expect(framework.Condition(mg.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(framework.Condition(mg.Status.Conditions, common.TypeSynced).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(mg.Status.ObservedGeneration).To(Equal(mg.Generation))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(mgr.Stop()).To(Succeed())
	g.Expect(os.RemoveAll(mgr.WorkDir)).To(Succeed())
	mgr, err = env.StartManager(mgr.WorkDir, app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Consistently(mgr.Engine.Processes).WithTimeout(5*time.Second).Should(BeZero(),
		"the restarted controller reconciles everything once; unchanged resources start no terraform")
	g.Expect(updateLatest(ctx, claim, func() {
		claim.Spec.Tags = map[string]string{"team": "c"}
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		tags, err := mc.GetBucketTagging(ctx, bucket)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(tags.ToMap()).To(HaveKeyWithValue("team", "c"))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	obj, err := mc.GetObject(ctx, bucket, "hello.txt", minio.GetObjectOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	body, err := io.ReadAll(obj)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(body)).To(Equal("hello"), "the bucket was recreated")

	By(t, "deleting the claim with reclaimPolicy Delete destroys the bucket and its state")
	mg := managedOf(g, ctx, claim)
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	}).WithTimeout(timeout).Should(BeTrue())
	exists, err = adminS3(g).BucketExists(ctx, bucket)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeFalse())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg))).To(BeTrue())
	state := &corev1.Secret{}
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: resource.StateSecretName(mg)}, state)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "state secret should be gone: %v", err)
	g.Expect(mgr.Stop()).To(Succeed())
}

func TestBucketRetain(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	setupMinIOClasses(ctx, t, "e2e-retain")
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	claim := framework.Bucket("e2e-retain", "archive", "keep", "archive-s3")
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	waitBound(g, ctx, claim)
	mg := managedOf(g, ctx, claim)
	bucket := mg.Spec.ForProvider.BucketName

	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim))
	}).WithTimeout(timeout).Should(BeTrue())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		g.Expect(mg.Status.BindingPhase).To(Equal(common.BindingPhaseReleased))
	}).WithTimeout(timeout).Should(Succeed())
	exists, err := adminS3(g).BucketExists(ctx, bucket)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(exists).To(BeTrue(), "Retain must keep the bucket")
	state := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: adminNS, Name: resource.StateSecretName(mg)}, state)).To(Succeed())
	g.Expect(state.Labels).To(HaveKeyWithValue("tfstate", "true"), "the controller's cache leaves Secrets labelled so out")

	By(t, "a new claim of the same name is not bound to the Released resource")
	again := framework.Bucket("e2e-retain", "archive", "", "")
	again.Spec.ResourceRef = &common.ObjectReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3Bucket", Name: mg.Name, Namespace: mg.Namespace}
	g.Expect(env.Client.Create(ctx, again)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(again), again)).To(Succeed())
		synced := framework.Condition(again.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(synced.Reason).To(Equal("ResourceReleased"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(again.Status.BindingPhase).To(Equal(common.BindingPhaseUnbound))
}

// By logs a step.
func By(t *testing.T, step string) { t.Helper(); t.Log("STEP: " + step) }
