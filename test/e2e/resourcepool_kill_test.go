package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	poolrules "terraplane.io/terraplane/internal/resourcepool"
	"terraplane.io/terraplane/test/framework"
)

// TestResourcePoolKilledDuringHandOut: the controller, a process of its own, is
// SIGKILLed again and again while claims take members of a pool (the unit tests of
// controllers/claim and controllers/resourcepool stop a hand-out after each step). Once it runs on, no
// member is handed out twice and none is lost: every claim has a resource of its own,
// bound to it, no member shares one with a claim, every S3Bucket of the namespace is bound
// to a claim or member that exists, and the pool is back to its size.
func TestResourcePoolKilledDuringHandOut(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const ns = "e2e-rpool-kill"
	setupMinIOClasses(ctx, t, ns)
	bin, err := framework.TerraplaneBinary()
	g.Expect(err).NotTo(HaveOccurred())
	work, logPath := t.TempDir(), filepath.Join(t.TempDir(), "controller.log")
	start := func() *framework.Controller {
		c, err := env.StartController(bin, work, logPath)
		g.Expect(err).NotTo(HaveOccurred())
		return c
	}
	ctrl := start()
	defer func() { ctrl.Kill() }()

	By(t, "a pool of three Buckets fills")
	pool := bucketPool(ns, "warm", 3)
	g.Expect(env.Client.Create(ctx, pool)).To(Succeed())
	waitPoolReady(g, ctx, pool, 3)

	By(t, "four claims take members, one a round, while the controller is killed at a random moment of each round")
	seed := time.Now().UnixNano()
	t.Logf("kill delays seeded with %d", seed)
	rnd := rand.New(rand.NewPCG(uint64(seed), 0))
	claims := make([]*storagev1.Bucket, 4)
	for i := range 6 {
		if i < len(claims) {
			claims[i] = framework.Bucket(ns, fmt.Sprintf("app-%d", i), "", fmt.Sprintf("app-%d-s3", i))
			claims[i].Spec.PoolRef = &common.PoolReference{Name: "warm"}
			g.Expect(env.Client.Create(ctx, claims[i])).To(Succeed())
		}
		// A restarted controller takes a second or two to sync its caches: the kills
		// fall before, during and after its first hand-outs.
		time.Sleep(time.Duration(300+rnd.IntN(2700)) * time.Millisecond)
		ctrl.Kill()
		ctrl = start()
	}

	By(t, "the controller runs on: every claim is Ready, each with a resource of its own")
	resources := map[string]string{}
	for _, c := range claims {
		waitBound(g, ctx, c)
		mg := managedOf(g, ctx, c)
		g.Expect(mg.Spec.ClaimRef.UID).To(Equal(c.UID))
		g.Expect(resources).NotTo(HaveKey(mg.Name), "claims %s and %s share %s", resources[mg.Name], c.Name, mg.Name)
		resources[mg.Name] = c.Name
	}
	waitPoolReady(g, ctx, pool, 3)
	g.Eventually(func(g Gomega) {
		members := poolMembers(g, ctx, ns, "warm")
		g.Expect(members).To(HaveLen(3))
		for _, m := range members {
			g.Expect(m.Annotations).NotTo(HaveKey(common.PoolMemberTakenByAnnotation))
			g.Expect(resources).NotTo(HaveKey(m.Spec.ResourceRef.Name), "member %s shares a resource with claim %s", m.Name, resources[m.Spec.ResourceRef.Name])
		}
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "no resource is lost: every S3Bucket made for this namespace is bound to a claim that exists")
	var mgs awsstoragev1.S3BucketList
	g.Expect(env.Client.List(ctx, &mgs, client.InNamespace(adminNS))).To(Succeed())
	warm := 0
	for _, mg := range mgs.Items {
		ref := mg.Spec.ClaimRef
		if ref == nil || ref.Namespace != ns {
			continue
		}
		b := &storagev1.Bucket{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, b)).To(Succeed(), "%s is bound to %s, which is gone", mg.Name, ref.Name)
		g.Expect(b.UID).To(Equal(ref.UID), "%s is bound to an earlier %s", mg.Name, ref.Name)
		g.Expect(b.Spec.ResourceRef.Name).To(Equal(mg.Name))
	}
	for _, c := range claims {
		b := &storagev1.Bucket{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), b)).To(Succeed())
		if _, ok := poolrules.ParseFill(b.Annotations); ok {
			warm++
		}
	}
	t.Logf("%d of %d claims were filled from the pool, the others provisioned", warm, len(claims))
	g.Expect(warm).To(BeNumerically(">=", 1), "no claim was filled from the pool")
}
