package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	mysqldbv1 "terraplane.io/terraplane/apis/mysql/database/v1alpha1"
	mysqlv1 "terraplane.io/terraplane/apis/mysql/v1alpha1"
	pgdbv1 "terraplane.io/terraplane/apis/postgresql/database/v1alpha1"
	pgv1 "terraplane.io/terraplane/apis/postgresql/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// driftInterval is how often the drift tests' controller plans unchanged resources.
const driftInterval = 5 * time.Second

// startServer starts a database server for one test, stopped when it ends.
func startServer(t *testing.T, start func(dir string) (*framework.Server, error)) *framework.Server {
	t.Helper()
	dir, err := os.MkdirTemp("", "terraplane-e2e-drift-")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	server, err := start(dir)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { server.Stop(); _ = os.RemoveAll(dir) })
	return server
}

// waitManagedReady waits until mg is Ready and Synced for its current generation.
// waitRepairRecorded waits until the apply that repaired drift made after since is
// recorded, and a plan after it has read the repair back: the server is in step while
// that apply is still being recorded.
func waitRepairRecorded(g Gomega, ctx context.Context, mg interface {
	client.Object
	GetManagedStatus() *common.ManagedStatus
}, since time.Time) {
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		tf := mg.GetManagedStatus().Terraform
		g.Expect(tf.LastApplyTime).NotTo(BeNil())
		g.Expect(tf.LastApplyTime.After(since)).To(BeTrue(), "the repair is recorded")
		g.Expect(tf.LastPlanTime.After(tf.LastApplyTime.Time)).To(BeTrue(), "a plan after the repair read it back")
	}).WithTimeout(timeout).Should(Succeed())
}

func waitManagedReady(g Gomega, ctx context.Context, mg interface {
	client.Object
	GetManagedStatus() *common.ManagedStatus
}) {
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mg), mg)).To(Succeed())
		conds := mg.GetManagedStatus().Conditions
		synced := framework.Condition(conds, common.TypeSynced)
		g.Expect(synced.Status).To(Equal(metav1.ConditionTrue), "%+v", synced)
		g.Expect(synced.ObservedGeneration).To(Equal(mg.GetGeneration()))
		g.Expect(framework.Condition(conds, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())
}

// TestPostgreSQLConverges: a connection limit changed on the Database reaches the server,
// one changed by hand is put back, and a database dropped behind Terraplane's back is
// there again after a drift check.
func TestPostgreSQLConverges(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	server := startServer(t, framework.StartPostgres)
	ns := "e2e-pg-drift"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Client.Create(ctx, adminSecret(ns, "pg-admin", server))).To(Succeed())
	g.Expect(env.Client.Create(ctx, &pgv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg"},
		Spec: pgv1.ProviderSpec{Host: server.Host, Port: int32(server.Port), SSLMode: "prefer",
			CredentialsSecretRef: pgv1.CredentialsSecretReference{Name: "pg-admin"}}})).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{DriftInterval: driftInterval})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	admin := func(sql string) string {
		out, err := runClient(map[string]string{"PGPASSWORD": server.AdminPassword}, "psql", "-X", "-tA", "-v", "ON_ERROR_STOP=1",
			"-h", server.Host, "-p", fmt.Sprint(server.Port), "-U", server.AdminUser, "-d", "postgres", "-c", sql)
		g.Expect(err).NotTo(HaveOccurred(), out)
		return out
	}
	limit := func() string { return admin("SELECT rolconnlimit FROM pg_roles WHERE rolname = 'drift_role'") }

	By(t, "a Database with a connection limit")
	db := &pgdbv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drift"}}
	db.Spec.ProviderRef = &common.LocalReference{Name: "pg"}
	db.Spec.ForProvider = pgdbv1.DatabaseParameters{DatabaseName: "drift_db", RoleName: "drift_role", EngineVersion: "15", ConnectionLimit: ptr.To[int32](3)}
	g.Expect(env.Client.Create(ctx, db)).To(Succeed())
	waitManagedReady(g, ctx, db)
	g.Expect(limit()).To(Equal("3"))

	By(t, "a new connection limit reaches the server")
	g.Expect(updateLatest(ctx, db, func() { db.Spec.ForProvider.ConnectionLimit = ptr.To[int32](7) })).To(Succeed())
	waitManagedReady(g, ctx, db)
	g.Expect(limit()).To(Equal("7"))

	By(t, "a limit changed by hand is put back at a drift check")
	admin("ALTER ROLE drift_role CONNECTION LIMIT 100")
	g.Eventually(limit).WithTimeout(timeout).WithPolling(time.Second).Should(Equal("7"))

	By(t, "a database dropped behind Terraplane's back is there again after a drift check")
	admin("DROP DATABASE drift_db")
	start := time.Now()
	g.Eventually(func() string {
		return admin("SELECT count(*) FROM pg_database WHERE datname = 'drift_db'")
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Equal("1"))
	t.Logf("dropped database recreated after %s (drift interval %s)", time.Since(start).Round(time.Second), driftInterval)
	g.Expect(admin("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'drift_db'")).To(Equal("drift_role"))

	By(t, "in step again, a drift check changes nothing")
	waitManagedReady(g, ctx, db)
	waitRepairRecorded(g, ctx, db, start)
	applied := db.Status.Terraform.LastApplyTime
	time.Sleep(3 * driftInterval)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(db), db)).To(Succeed())
	g.Expect(db.Status.Terraform.LastApplyTime).To(Equal(applied), "no apply while the server is in step")
	g.Expect(db.Status.Terraform.LastPlanTime.After(applied.Time)).To(BeTrue(), "drift checks ran")

	g.Expect(env.Client.Delete(ctx, db)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(db), db)) }).WithTimeout(timeout).Should(BeTrue())
	g.Expect(admin("SELECT count(*) FROM pg_database WHERE datname = 'drift_db'")).To(Equal("0"))
}

// TestMySQLConverges: a connection limit changed on the Database reaches the server, one
// changed by hand is put back, a database or user dropped behind Terraplane's back is
// there again after a drift check (the controller reads the server before each plan), and
// an Observe-only Database reports such drift without repairing it.
func TestMySQLConverges(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	server := startServer(t, framework.StartMariaDB)
	ns := "e2e-mysql-drift"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Client.Create(ctx, adminSecret(ns, "mariadb-admin", server))).To(Succeed())
	g.Expect(env.Client.Create(ctx, &mysqlv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mariadb"},
		Spec: mysqlv1.ProviderSpec{Host: server.Host, Port: int32(server.Port), CredentialsSecretRef: mysqlv1.CredentialsSecretReference{Name: "mariadb-admin"}}})).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{DriftInterval: driftInterval})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	admin := func(sql string) string {
		out, err := runClient(map[string]string{"MYSQL_PWD": server.AdminPassword}, "mariadb", "--no-defaults", "--protocol=TCP", "-N", "-B",
			"-h", server.Host, "-P", fmt.Sprint(server.Port), "-u", server.AdminUser, "-e", sql)
		g.Expect(err).NotTo(HaveOccurred(), out)
		return out
	}
	limit := func() string { return admin("SELECT max_user_connections FROM mysql.user WHERE user = 'drift_user'") }
	databases := func() string {
		return admin("SELECT count(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'drift_db'")
	}

	db := &mysqldbv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "drift"}}
	db.Spec.ProviderRef = &common.LocalReference{Name: "mariadb"}
	db.Spec.ForProvider = mysqldbv1.DatabaseParameters{DatabaseName: "drift_db", RoleName: "drift_user", ConnectionLimit: ptr.To[int32](3)}
	g.Expect(env.Client.Create(ctx, db)).To(Succeed())
	waitManagedReady(g, ctx, db)
	g.Expect(limit()).To(Equal("3"))

	By(t, "a new connection limit reaches the server")
	g.Expect(updateLatest(ctx, db, func() { db.Spec.ForProvider.ConnectionLimit = ptr.To[int32](9) })).To(Succeed())
	waitManagedReady(g, ctx, db)
	g.Expect(limit()).To(Equal("9"))

	By(t, "a limit changed by hand is put back at a drift check")
	admin("ALTER USER 'drift_user'@'%' WITH MAX_USER_CONNECTIONS 100")
	g.Eventually(limit).WithTimeout(timeout).WithPolling(time.Second).Should(Equal("9"))

	By(t, "a database and a user dropped behind Terraplane's back are there again after a drift check")
	admin("DROP DATABASE drift_db; DROP USER 'drift_user'@'%'")
	start := time.Now()
	g.Eventually(databases).WithTimeout(timeout).WithPolling(time.Second).Should(Equal("1"))
	g.Eventually(limit).WithTimeout(timeout).WithPolling(time.Second).Should(Equal("9"))
	t.Logf("dropped database and user recreated after %s (drift interval %s)", time.Since(start).Round(time.Second), driftInterval)

	By(t, "in step again, a drift check changes nothing")
	waitManagedReady(g, ctx, db)
	waitRepairRecorded(g, ctx, db, start)
	applied := db.Status.Terraform.LastApplyTime
	time.Sleep(3 * driftInterval)
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(db), db)).To(Succeed())
	g.Expect(db.Status.Terraform.LastApplyTime).To(Equal(applied), "no apply while the server is in step")

	By(t, "observe-only, a dropped database is reported and not recreated")
	g.Expect(updateLatest(ctx, db, func() { db.Spec.ManagementPolicies = []common.ManagementAction{common.ManagementObserve} })).To(Succeed())
	admin("DROP DATABASE drift_db")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(db), db)).To(Succeed())
		drifted := framework.Condition(db.Status.Conditions, common.TypeDrifted)
		g.Expect(drifted.Status).To(Equal(metav1.ConditionTrue), "%v", db.Status.Conditions)
		g.Expect(drifted.Message).To(ContainSubstring("terraform_data.converge"))
	}).WithTimeout(timeout).WithPolling(time.Second).Should(Succeed())
	g.Expect(databases()).To(Equal("0"))

	g.Expect(updateLatest(ctx, db, func() { db.Spec.ManagementPolicies = nil })).To(Succeed())
	g.Expect(env.Client.Delete(ctx, db)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(db), db)) }).WithTimeout(timeout).Should(BeTrue())
	g.Expect(limit()).To(BeEmpty(), "the user is dropped with the Database")
}
