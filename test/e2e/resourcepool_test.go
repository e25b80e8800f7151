package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	poolrules "terraplane.io/terraplane/internal/resourcepool"
	"terraplane.io/terraplane/test/framework"
)

// bucketPool is a ResourcePool of size Buckets of class "standard".
func bucketPool(ns, name string, size int32) *scalingv1.ResourcePool {
	return &scalingv1.ResourcePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: scalingv1.ResourcePoolSpec{Size: size, ClaimTemplate: scalingv1.ClaimTemplate{
			APIVersion: storagev1.GroupVersion.String(), Kind: "Bucket", Labels: map[string]string{"e2e": "pool"},
			Spec: &apiextensionsv1.JSON{Raw: []byte(`{"classRef":{"name":"standard"}}`)}}}}
}

// waitPoolReady waits until the pool counts want ready members and reports Ready.
func waitPoolReady(g Gomega, ctx context.Context, pool *scalingv1.ResourcePool, want int32) {
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
		g.Expect(pool.Status.Ready).To(Equal(want), "status %+v", pool.Status)
		g.Expect(framework.Condition(pool.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).WithPolling(250 * time.Millisecond).Should(Succeed())
}

// poolMembers lists the pool's members.
func poolMembers(g Gomega, ctx context.Context, ns, pool string) []storagev1.Bucket {
	list := &storagev1.BucketList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{common.PoolLabel: pool})).To(Succeed())
	return list.Items
}

// TestResourcePoolBuckets: a pool of three Buckets on MinIO hands its ready members to
// three of five claims made together at once, each a bucket of its own, provisions the
// other two cold, and is back to three ready members afterwards.
func TestResourcePoolBuckets(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const ns = "e2e-rpool"
	setupMinIOClasses(ctx, t, ns)
	port, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	opts := app.Options{MetricsAddr: fmt.Sprintf("127.0.0.1:%d", port), MetricsSecure: false}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	mgr, err := env.StartManager(t.TempDir(), opts)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "a pool of three Buckets fills with three ready members")
	pool := bucketPool(ns, "warm", 3)
	start := time.Now()
	g.Expect(env.Client.Create(ctx, pool)).To(Succeed())
	waitPoolReady(g, ctx, pool, 3)
	t.Logf("pool of 3 ready after %s", time.Since(start).Round(100*time.Millisecond))
	g.Expect(poolMembers(g, ctx, ns, "warm")).To(HaveLen(3))

	By(t, "five claims naming the pool, made together: three take members at once, two are provisioned cold")
	claims := make([]*storagev1.Bucket, 5)
	for i := range claims {
		claims[i] = framework.Bucket(ns, fmt.Sprintf("app-%d", i), "", fmt.Sprintf("app-%d-s3", i))
		claims[i].Spec.PoolRef = &common.PoolReference{Name: "warm"}
	}
	start = time.Now()
	var wg sync.WaitGroup
	for _, c := range claims {
		wg.Go(func() { g.Expect(env.Client.Create(ctx, c)).To(Succeed()) })
	}
	wg.Wait()
	var warmReady time.Duration
	g.Eventually(func(g Gomega) {
		n := 0
		for _, c := range claims {
			b := &storagev1.Bucket{}
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), b)).To(Succeed())
			if framework.Condition(b.Status.Conditions, common.TypeReady).Status == metav1.ConditionTrue {
				n++
			}
		}
		g.Expect(n).To(BeNumerically(">=", 3))
	}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	warmReady = time.Since(start)
	t.Logf("three claims Ready from the pool after %s", warmReady.Round(10*time.Millisecond))
	g.Expect(warmReady).To(BeNumerically("<", 5*time.Second), "claims filled from ready members are Ready at once (~2 s asked)")

	buckets := map[string]string{}
	warm, cold := 0, 0
	for _, c := range claims {
		waitBound(g, ctx, c)
		secret := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Spec.WriteConnectionSecretToRef.Name}, secret)).To(Succeed())
		name := string(secret.Data["bucket"])
		g.Expect(buckets).NotTo(HaveKey(name), "claims %s and %s share a bucket", buckets[name], c.Name)
		buckets[name] = c.Name
		exists, err := s3(g, secret).BucketExists(ctx, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(exists).To(BeTrue())
		mg := managedOf(g, ctx, c)
		g.Expect(mg.Spec.ClaimRef.UID).To(Equal(c.UID))
		if _, ok := poolrules.ParseFill(c.Annotations); ok {
			warm++
		} else {
			cold++
			g.Expect(c.Spec.ClassRef.Name).To(Equal("standard"), "a cold claim is provisioned from the pool's class")
			g.Expect(mg.Name).To(Equal("bucket-" + string(c.UID)))
		}
	}
	g.Expect([]int{warm, cold}).To(Equal([]int{3, 2}))

	By(t, "the pool is back to three ready members, and counts the three it handed out")
	waitPoolReady(g, ctx, pool, 3)
	g.Expect(pool.Status.HandedOut).To(Equal(int32(3)))
	g.Expect(poolMembers(g, ctx, ns, "warm")).To(HaveLen(3), "the handed-out members are gone, their replacements made")
	series := `namespace="` + ns + `",pool="warm"`
	g.Eventually(func(g Gomega) {
		got := scrape(g, metricsURL)
		g.Expect(got).To(HaveKeyWithValue("terraplane_resourcepool_members{"+series+`,state="ready"}`, 3.0))
		g.Expect(got).To(HaveKeyWithValue("terraplane_resourcepool_claims_filled_total{fill=\"warm\","+series+"}", 3.0))
		g.Expect(got).To(HaveKeyWithValue("terraplane_resourcepool_claims_filled_total{fill=\"cold\","+series+"}", 2.0))
		g.Expect(got).To(HaveKey(HavePrefix("terraplane_resourcepool_scaled_total{direction=\"up\"")))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a member taken by a claim that is gone (a controller killed after the take) comes back to the pool")
	g.Expect(mgr.Stop()).To(Succeed())
	members := poolMembers(g, ctx, ns, "warm")
	orphan := &members[0]
	orphan.Annotations = map[string]string{common.PoolMemberTakenByAnnotation: "vanished/00000000-0000-0000-0000-000000000000"}
	g.Expect(env.Client.Update(ctx, orphan)).To(Succeed())
	By(t, "a claim whose take was committed before the controller died finishes with that member, and takes no other")
	late := framework.Bucket(ns, "late", "", "late-s3")
	late.Spec.PoolRef = &common.PoolReference{Name: "warm"}
	g.Expect(env.Client.Create(ctx, late)).To(Succeed())
	taken := &members[1]
	taken.Annotations = map[string]string{common.PoolMemberTakenByAnnotation: poolrules.Taker{Name: late.Name, UID: late.UID}.String()}
	g.Expect(env.Client.Update(ctx, taken)).To(Succeed())
	mgr, err = env.StartManager(mgr.WorkDir, app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	waitBound(g, ctx, late)
	f, ok := poolrules.ParseFill(late.Annotations)
	g.Expect(ok).To(BeTrue())
	g.Expect(f.Member).To(Equal(taken.Name))
	g.Eventually(func(g Gomega) {
		o := &storagev1.Bucket{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(orphan), o)).To(Succeed())
		g.Expect(o.Annotations).NotTo(HaveKey(common.PoolMemberTakenByAnnotation))
		mg := &awsstoragev1.S3Bucket{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: o.Spec.ResourceRef.Namespace, Name: o.Spec.ResourceRef.Name}, mg)).To(Succeed())
		g.Expect(mg.Spec.ClaimRef.UID).To(Equal(o.UID))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	waitPoolReady(g, ctx, pool, 3)
	g.Expect(pool.Status.HandedOut).To(Equal(int32(4)))
	resources := map[string]bool{}
	for _, c := range append(claims, late) {
		b := &storagev1.Bucket{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), b)).To(Succeed())
		g.Expect(resources).NotTo(HaveKey(b.Spec.ResourceRef.Name))
		resources[b.Spec.ResourceRef.Name] = true
	}
	for _, m := range poolMembers(g, ctx, ns, "warm") {
		g.Expect(resources).NotTo(HaveKey(m.Spec.ResourceRef.Name), "member %s shares a resource with a claim", m.Name)
	}
}

// TestResourcePoolRefusals: a template of a kind that is not a claim kind and a poolRef
// to another namespace are reported with Synced False, a reason and one event; maxSize
// below size is refused by the CRD.
func TestResourcePoolRefusals(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const ns = "e2e-rpool-bad"
	setupMinIOClasses(ctx, t, ns)
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "maxSize below size is refused by the CRD")
	small := bucketPool(ns, "small", 3)
	small.Spec.MaxSize = ptr.To[int32](2)
	err = env.Client.Create(ctx, small)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("maxSize must be at least size"))

	By(t, "a template of a managed kind is NotAClaimKind")
	managed := bucketPool(ns, "managed", 1)
	managed.Spec.ClaimTemplate.APIVersion, managed.Spec.ClaimTemplate.Kind = awsstoragev1.GroupVersion.String(), "S3Bucket"
	g.Expect(env.Client.Create(ctx, managed)).To(Succeed())
	waitRefused(g, ctx, managed, func() []metav1.Condition { return managed.Status.Conditions }, "NotAClaimKind")

	By(t, "a claim naming a pool in another namespace is ReferenceNotAllowed")
	g.Expect(env.Client.Create(ctx, bucketPool(ns, "ok", 0))).To(Succeed())
	b := framework.Bucket(ns, "elsewhere", "", "")
	b.Spec.PoolRef = &common.PoolReference{Name: "ok", Namespace: "e2e-rpool"}
	g.Expect(env.Client.Create(ctx, b)).To(Succeed())
	waitRefused(g, ctx, b, func() []metav1.Condition { return b.Status.Conditions }, common.ReasonReferenceNotAllowed)
	g.Expect(b.Spec.ResourceRef).To(BeNil())

	By(t, "a claim naming a pool of another kind is PoolKindMismatch")
	pg := bucketPool(ns, "postgres", 0)
	pg.Spec.ClaimTemplate.APIVersion, pg.Spec.ClaimTemplate.Kind = "database.terraplane.io/v1alpha1", "PostgreSQLInstance"
	pg.Spec.ClaimTemplate.Spec = nil
	g.Expect(env.Client.Create(ctx, pg)).To(Succeed())
	mismatch := framework.Bucket(ns, "mismatch", "", "")
	mismatch.Spec.PoolRef = &common.PoolReference{Name: "postgres"}
	g.Expect(env.Client.Create(ctx, mismatch)).To(Succeed())
	waitRefused(g, ctx, mismatch, func() []metav1.Condition { return mismatch.Status.Conditions }, "PoolKindMismatch")
}

// waitRefused waits for Synced False with reason on obj, then checks that it was
// announced by exactly one Warning event, even after more reconciles.
func waitRefused(g Gomega, ctx context.Context, obj client.Object, conds func() []metav1.Condition, reason string) {
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		s := framework.Condition(conds(), common.TypeSynced)
		g.Expect(s.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(s.Reason).To(Equal(reason), s.Message)
	}).WithTimeout(30 * time.Second).Should(Succeed())
	time.Sleep(5 * time.Second) // the user error retry (2s in tests) runs the reconcile again
	evs, err := env.Events(ctx, obj)
	g.Expect(err).NotTo(HaveOccurred())
	n := 0
	for _, e := range evs {
		if e.Reason == reason {
			n++
			g.Expect(e.Type).To(Equal(corev1.EventTypeWarning))
			g.Expect(e.Count).To(BeNumerically("<=", 1), "the event was repeated")
			g.Expect(e.Series).To(BeNil(), "the event was repeated")
		}
	}
	g.Expect(n).To(Equal(1), "events %+v", evs)
}
