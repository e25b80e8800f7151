package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	mysqldbv1 "terraplane.io/terraplane/apis/mysql/database/v1alpha1"
	mysqlv1 "terraplane.io/terraplane/apis/mysql/v1alpha1"
	pgdbv1 "terraplane.io/terraplane/apis/postgresql/database/v1alpha1"
	pgv1 "terraplane.io/terraplane/apis/postgresql/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// engine is what the database lifecycle test needs to know about one server kind.
type engine struct {
	name     string
	version  string
	start    func(dir string) (*framework.Server, error)
	objects  func(ns string, s *framework.Server) []client.Object // provider, classes
	claim    func(ns, name, class, version string) client.Object
	query    func(secret *corev1.Secret, sql string) (string, error)
	adminSQL func(s *framework.Server, sql string) (string, error)
	exists   string // admin query printing 1 when database %s exists
}

func TestPostgreSQLLifecycle(t *testing.T) {
	testDatabaseLifecycle(t, engine{
		name: "postgresql", version: "15", start: framework.StartPostgres,
		objects: func(ns string, s *framework.Server) []client.Object {
			provider := &pgv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg"},
				Spec: pgv1.ProviderSpec{Host: s.Host, Port: int32(s.Port), SSLMode: "disable",
					CredentialsSecretRef: pgv1.CredentialsSecretReference{Name: "pg-admin"}}}
			class := func(name string, policy common.ReclaimPolicy) client.Object {
				return &pgdbv1.DatabaseClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
					AllowedNamespaces: framework.Allow("e2e-postgresql"), // the test's app namespace
					SpecTemplate: pgdbv1.DatabaseClassSpecTemplate{
						ClassSpecTemplate: common.ClassSpecTemplate{ProviderRef: &common.LocalReference{Name: "pg"}, ReclaimPolicy: policy},
						ForProvider:       pgdbv1.DatabaseParameters{EngineVersion: "15"}}}
			}
			return []client.Object{adminSecret(ns, "pg-admin", s), provider, class("postgresql-delete", common.ReclaimDelete), class("postgresql-retain", common.ReclaimRetain)}
		},
		claim: func(ns, name, class, version string) client.Object {
			c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			c.Spec.ClassRef = &common.LocalReference{Name: class}
			c.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: name + "-conn"}
			c.Spec.EngineVersion = version
			return c
		},
		query: func(s *corev1.Secret, sql string) (string, error) {
			return runClient(map[string]string{"PGPASSWORD": string(s.Data["password"])}, "psql", "-X", "-tA", "-v", "ON_ERROR_STOP=1",
				"-h", string(s.Data["endpoint"]), "-p", string(s.Data["port"]), "-U", string(s.Data["username"]), "-d", string(s.Data["database"]), "-c", sql)
		},
		adminSQL: func(s *framework.Server, sql string) (string, error) {
			return runClient(map[string]string{"PGPASSWORD": s.AdminPassword}, "psql", "-X", "-tA", "-h", s.Host, "-p", fmt.Sprint(s.Port), "-U", s.AdminUser, "-d", "postgres", "-c", sql)
		},
		exists: "SELECT count(*) FROM pg_database WHERE datname = '%s'",
	})
}

func TestMySQLLifecycle(t *testing.T) {
	testDatabaseLifecycle(t, engine{
		name: "mysql", version: "10.11", start: framework.StartMariaDB,
		objects: func(ns string, s *framework.Server) []client.Object {
			provider := &mysqlv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mariadb"},
				Spec: mysqlv1.ProviderSpec{Host: s.Host, Port: int32(s.Port), CredentialsSecretRef: mysqlv1.CredentialsSecretReference{Name: "mariadb-admin"}}}
			class := func(name string, policy common.ReclaimPolicy) client.Object {
				return &mysqldbv1.DatabaseClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
					AllowedNamespaces: framework.Allow("e2e-mysql"), // the test's app namespace
					SpecTemplate: mysqldbv1.DatabaseClassSpecTemplate{
						ClassSpecTemplate: common.ClassSpecTemplate{ProviderRef: &common.LocalReference{Name: "mariadb"}, ReclaimPolicy: policy},
						ForProvider:       mysqldbv1.DatabaseParameters{EngineVersion: "10.11"}}}
			}
			return []client.Object{adminSecret(ns, "mariadb-admin", s), provider, class("mysql-delete", common.ReclaimDelete), class("mysql-retain", common.ReclaimRetain)}
		},
		claim: func(ns, name, class, version string) client.Object {
			c := &databasev1.MySQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			c.Spec.ClassRef = &common.LocalReference{Name: class}
			c.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: name + "-conn"}
			c.Spec.EngineVersion = version
			return c
		},
		query: func(s *corev1.Secret, sql string) (string, error) {
			return runClient(map[string]string{"MYSQL_PWD": string(s.Data["password"])}, "mariadb", "--no-defaults", "--protocol=TCP", "-N", "-B",
				"-h", string(s.Data["endpoint"]), "-P", string(s.Data["port"]), "-u", string(s.Data["username"]), string(s.Data["database"]), "-e", sql)
		},
		adminSQL: func(s *framework.Server, sql string) (string, error) {
			return runClient(map[string]string{"MYSQL_PWD": s.AdminPassword}, "mariadb", "--no-defaults", "--protocol=TCP", "-N", "-B", "-h", s.Host, "-P", fmt.Sprint(s.Port), "-u", s.AdminUser, "-e", sql)
		},
		exists: "SELECT count(*) FROM information_schema.schemata WHERE schema_name = '%s'",
	})
}

func adminSecret(ns, name string, s *framework.Server) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		StringData: map[string]string{"username": s.AdminUser, "password": s.AdminPassword}}
}

func runClient(env map[string]string, bin string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func testDatabaseLifecycle(t *testing.T, e engine) {
	ctx := context.Background()
	g := NewWithT(t)
	dir, err := os.MkdirTemp("", "terraplane-e2e-"+e.name+"-")
	g.Expect(err).NotTo(HaveOccurred())
	defer os.RemoveAll(dir)
	server, err := e.start(dir)
	g.Expect(err).NotTo(HaveOccurred())
	defer server.Stop()

	appNS := "e2e-" + e.name
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	for _, o := range e.objects(adminNS, server) {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	portable := func(name, target string, isDefault bool) client.Object {
		ref := common.ClassReference{APIVersion: "database." + e.name + ".terraplane.io/v1alpha1", Kind: "DatabaseClass", Name: target, Namespace: adminNS}
		meta := metav1.ObjectMeta{Namespace: appNS, Name: name}
		if isDefault {
			meta.Labels = map[string]string{common.DefaultClassLabel: "true"}
		}
		if e.name == "postgresql" {
			return &databasev1.PostgreSQLInstanceClass{ObjectMeta: meta, ClassRef: ref}
		}
		return &databasev1.MySQLInstanceClass{ObjectMeta: meta, ClassRef: ref}
	}
	g.Expect(env.Client.Create(ctx, portable("standard", e.name+"-delete", true))).To(Succeed())
	g.Expect(env.Client.Create(ctx, portable("keep", e.name+"-retain", false))).To(Succeed())

	By(t, "a claim the class cannot satisfy stays Unbound and says why")
	wrong := e.claim(appNS, "wrong", "standard", "9")
	g.Expect(env.Client.Create(ctx, wrong)).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := claimStatus(g, ctx, wrong)
		synced := framework.Condition(st.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal("ClassCannotSatisfy"))
		g.Expect(synced.Message).To(ContainSubstring("engineVersion 9"))
		g.Expect(st.BindingPhase).To(Equal(common.BindingPhaseUnbound))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "claim → Bound; the connection Secret logs in and runs a query")
	app := e.claim(appNS, "app", "standard", e.version)
	g.Expect(env.Client.Create(ctx, app)).To(Succeed())
	waitClaimReady(g, ctx, app)
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "app-conn"}, secret)).To(Succeed())
	for _, k := range []string{"endpoint", "port", "username", "password"} {
		g.Expect(secret.Data).To(HaveKey(k))
	}
	out, err := e.query(secret, "CREATE TABLE t (x int); INSERT INTO t VALUES (41), (1); SELECT sum(x) FROM t;")
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(HaveSuffix("42"))
	database := string(secret.Data["database"])

	By(t, "deleting with reclaimPolicy Delete drops the database and the role")
	g.Expect(env.Client.Delete(ctx, app)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(app), app))
	}).WithTimeout(timeout).Should(BeTrue())
	out, err = e.adminSQL(server, fmt.Sprintf(e.exists, database))
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("0"))
	_, err = e.query(secret, "SELECT 1")
	g.Expect(err).To(HaveOccurred(), "the role must be gone")

	By(t, "deleting with reclaimPolicy Retain keeps the database")
	kept := e.claim(appNS, "kept", "keep", "")
	g.Expect(env.Client.Create(ctx, kept)).To(Succeed())
	waitClaimReady(g, ctx, kept)
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "kept-conn"}, secret)).To(Succeed())
	database = string(secret.Data["database"])
	g.Expect(env.Client.Delete(ctx, kept)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(kept), kept))
	}).WithTimeout(timeout).Should(BeTrue())
	out, err = e.adminSQL(server, fmt.Sprintf(e.exists, database))
	g.Expect(err).NotTo(HaveOccurred(), out)
	g.Expect(out).To(Equal("1"))
	out, err = e.query(secret, "SELECT 1")
	g.Expect(err).NotTo(HaveOccurred(), "the retained role still logs in: %s", out)
}

func claimStatus(g Gomega, ctx context.Context, obj client.Object) *common.ClaimStatus {
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	type claim interface{ GetClaimStatus() *common.ClaimStatus }
	return obj.(claim).GetClaimStatus()
}

func waitClaimReady(g Gomega, ctx context.Context, obj client.Object) {
	g.Eventually(func(g Gomega) {
		st := claimStatus(g, ctx, obj)
		g.Expect(st.BindingPhase).To(Equal(common.BindingPhaseBound), "Synced: %+v", framework.Condition(st.Conditions, common.TypeSynced))
		ready := framework.Condition(st.Conditions, common.TypeReady)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "Ready: %+v", ready)
	}).WithTimeout(timeout).Should(Succeed())
}
