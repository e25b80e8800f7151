package install

import (
	"context"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	pgdbv1 "terraplane.io/terraplane/apis/postgresql/database/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

// databaseKindRefused checks that the controller pod, whose image carries no psql, refuses
// a PostgreSQL Database (its module runs psql) with Synced=False ClientMissing, a message
// that says what to do, and one Warning event, and runs no terraform for it.
func databaseKindRefused(g Gomega, ctx context.Context, n *nodeEnv) {
	db := &pgdbv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "needs-psql"}}
	db.Spec.ProviderRef = &common.LocalReference{Name: "pg"}
	db.Spec.ForProvider = pgdbv1.DatabaseParameters{DatabaseName: "orders", RoleName: "orders", EngineVersion: "15"}
	g.Expect(n.Client.Create(ctx, db)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(n.Client.Get(ctx, client.ObjectKeyFromObject(db), db)).To(Succeed())
		synced := framework.Condition(db.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(synced.Reason).To(Equal(common.ReasonClientMissing))
		g.Expect(synced.Message).To(And(ContainSubstring("psql"), ContainSubstring("postgresql-client")))
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	g.Expect(db.Status.Terraform.LastPlanTime).To(BeNil(), "no terraform ran for it")
	g.Eventually(func(g Gomega) {
		events := &corev1.EventList{}
		g.Expect(n.Client.List(ctx, events, client.InNamespace(adminNS), client.MatchingFields{"involvedObject.name": db.Name})).To(Succeed())
		warnings := 0
		for _, e := range events.Items {
			if e.Reason == common.ReasonClientMissing && e.Type == corev1.EventTypeWarning {
				warnings++
			}
		}
		g.Expect(warnings).To(Equal(1))
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	g.Expect(n.Client.Delete(ctx, db)).To(Succeed())
}
