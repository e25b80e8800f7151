package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// TestClaimsWaitTheirTurn: with one new resource at a time allowed in a namespace, claims
// made together are taken in one after another, in the order they were made: the
// waiting ones say Queued and have no resource yet, and each resource is made only once
// the one before it has reported.
func TestClaimsWaitTheirTurn(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-intake"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{MaxCreatingPerNamespace: 1})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	_, portable := slowClasses(ctx, g, "intake", appNS)
	var claims []*databasev1.PostgreSQLInstance
	for i := range 3 {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: fmt.Sprintf("turn-%d", i)}}
		c.Spec.ClassRef = &common.LocalReference{Name: portable.Name}
		c.Spec.StorageGB = 2 // 8 s to make
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		claims = append(claims, c)
		time.Sleep(1100 * time.Millisecond) // creation times are kept to the second; within one, claims go in the order they are seen
	}

	By(t, "the last claim says Queued, and has no resource, while the first is made")
	g.Eventually(func(g Gomega) {
		last := claims[2]
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(last), last)).To(Succeed())
		g.Expect(framework.Condition(last.Status.Conditions, common.TypeSynced).Reason).To(Equal(common.ReasonQueued))
		g.Expect(framework.Condition(last.Status.Conditions, common.TypeReady).Reason).To(Equal(common.ReasonQueued))
		g.Expect(last.Spec.ResourceRef).To(BeNil())
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "every claim becomes Ready, each resource made after the one before it reported, in the order the claims were made")
	readyInTurn(ctx, g, appNS, claims)
}

// TestClaimsMadeBeforeTheirClassGoInTheOrderTheyWereMade: claims made while their class
// cannot be used yet wait for it; once it is Ready they are taken in one after another
// in the order they were made, not in the order the controller looks at them.
func TestClaimsMadeBeforeTheirClassGoInTheOrderTheyWereMade(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-intake-order"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{MaxCreatingPerNamespace: 1})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	cm, class, portable := slowClassObjects("intake-order", appNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, portable)).To(Succeed())
	var claims []*databasev1.PostgreSQLInstance
	for i := range 4 {
		// Named against the order they are made in, so that no order by name passes.
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: fmt.Sprintf("order-%d", 3-i)}}
		c.Spec.ClassRef = &common.LocalReference{Name: portable.Name}
		c.Spec.StorageGB = 1 // 4 s to make
		g.Expect(env.Client.Create(ctx, c)).To(Succeed())
		claims = append(claims, c)
		time.Sleep(1100 * time.Millisecond) // creation times are kept to the second
	}

	By(t, "the claims wait for their class, whose module is not there yet")
	for _, c := range claims {
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
			g.Expect(framework.Condition(c.Status.Conditions, common.TypeSynced).Reason).To(Equal(common.ReasonClassNotReady))
		}).WithTimeout(timeout).Should(Succeed())
	}

	By(t, "once the module is there, every claim becomes Ready, each resource made after the one before it reported, in the order the claims were made")
	g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	readyInTurn(ctx, g, appNS, claims)
}

// readyInTurn waits for each of claims to be Ready, in turn, and checks that each one's
// Module was made once the Module of the claim before it was Ready.
func readyInTurn(ctx context.Context, g Gomega, appNS string, claims []*databasev1.PostgreSQLInstance) {
	var readyAt metav1.Time
	for i, c := range claims {
		kubectlWait(g, appNS, "postgresqlinstance/"+c.Name)
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		mod := &terraformv1.Module{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: c.Spec.ResourceRef.Namespace, Name: c.Spec.ResourceRef.Name}, mod)).To(Succeed())
		if i > 0 {
			// Kubernetes keeps times to the second.
			g.Expect(mod.CreationTimestamp.Time).NotTo(BeTemporally("<", readyAt.Time),
				"%s's Module was made before the claim before it was Ready", c.Name)
		}
		readyAt = framework.Condition(mod.Status.Conditions, common.TypeReady).LastTransitionTime
	}
}
