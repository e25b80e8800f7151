package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	pgdbv1 "terraplane.io/terraplane/apis/postgresql/database/v1alpha1"
	pgv1 "terraplane.io/terraplane/apis/postgresql/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

// databases is the deterministic-identity half of the scenario: PostgreSQL Databases
// (the bundled module, names fixed by the resource) on a real server. An interrupted
// create must carry on by itself, never stop at CreateInterrupted, and leave exactly
// one database per live resource on the server: none twice, none orphaned.
type databases struct {
	t       *testing.T
	server  *framework.Server
	names   []string
	deleted map[string]bool
	stopped map[string]bool // seen at CreateInterrupted: a deterministic kind must never stop there
	// deleting is told of each Database deleted, whose state then empties rightly
	deleting func(client.Object)
}

// startDatabases starts the PostgreSQL server and its Provider in the chaos namespace.
func startDatabases(ctx context.Context, t *testing.T) *databases {
	// not under t.TempDir(): the server runs as the postgres user, who must reach it
	dir, err := os.MkdirTemp("", "terraplane-chaos-postgres-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	server, err := framework.StartPostgres(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(server.Stop)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg-admin"},
		StringData: map[string]string{"username": server.AdminUser, "password": server.AdminPassword}}
	provider := &pgv1.Provider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg"},
		Spec: pgv1.ProviderSpec{Host: server.Host, Port: int32(server.Port), SSLMode: "disable",
			CredentialsSecretRef: pgv1.CredentialsSecretReference{Name: "pg-admin"}}}
	for _, o := range []client.Object{secret, provider} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return &databases{t: t, server: server, deleted: map[string]bool{}, stopped: map[string]bool{}}
}

// dbName is the database (and role) name of the Database resource name.
func dbName(name string) string { return "chaos_" + strings.ReplaceAll(name, "-", "_") }

func (d *databases) database(name string, limit int32) *pgdbv1.Database {
	db := &pgdbv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	db.Spec.ProviderRef = &common.LocalReference{Name: "pg"}
	db.Spec.ReclaimPolicy = common.ReclaimDelete
	db.Spec.ForProvider = pgdbv1.DatabaseParameters{DatabaseName: dbName(name), RoleName: dbName(name), EngineVersion: "15", ConnectionLimit: &limit}
	return db
}

// step creates two Databases at first, then one each round; every other round it
// changes one's connection limit, and every fourth deletes one.
func (d *databases) step(ctx context.Context, r *rand.Rand, i int) {
	if i == 0 {
		d.create(ctx, "d-a")
		d.create(ctx, "d-b")
	}
	d.create(ctx, fmt.Sprintf("d%02d", i))
	live := d.live()
	if i%2 == 1 {
		d.update(ctx, live[r.IntN(len(live))], int32(10+i))
	}
	if i%4 == 3 {
		d.remove(ctx, live[r.IntN(len(live))])
	}
}

func (d *databases) create(ctx context.Context, name string) {
	d.names = append(d.names, name)
	if err := env.Client.Create(ctx, d.database(name, -1)); err != nil {
		d.t.Fatalf("create database %s: %v", name, err)
	}
}

func (d *databases) live() []string {
	return slices.DeleteFunc(slices.Clone(d.names), func(n string) bool { return d.deleted[n] })
}

func (d *databases) update(ctx context.Context, name string, limit int32) {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		db := &pgdbv1.Database{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, db); err != nil {
			return err
		}
		db.Spec.ForProvider.ConnectionLimit = &limit
		return env.Client.Update(ctx, db)
	})
	if err != nil {
		d.t.Fatalf("update database %s: %v", name, err)
	}
}

func (d *databases) remove(ctx context.Context, name string) {
	d.deleted[name] = true
	db := d.database(name, -1)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(db), db); err != nil {
		d.t.Fatal(err)
	}
	d.deleting(db)
	if err := env.Client.Delete(ctx, db); err != nil {
		d.t.Fatalf("delete database %s: %v", name, err)
	}
}

// unsettled lists the Databases not yet Ready, or not yet gone where deleted.
func (d *databases) unsettled(ctx context.Context) []string {
	var out []string
	for _, n := range d.names {
		db := &pgdbv1.Database{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, db)
		switch {
		case d.deleted[n]:
			if !apierrors.IsNotFound(err) {
				out = append(out, n+": not deleted yet")
			}
			continue
		case err != nil:
			out = append(out, n+": "+err.Error())
			continue
		}
		synced := framework.Condition(db.Status.Conditions, common.TypeSynced)
		if synced.Reason == common.ReasonCreateInterrupted && !d.stopped[n] {
			d.stopped[n] = true
			d.t.Errorf("database %s stopped at CreateInterrupted, but its identity is fixed: %s", n, synced.Message)
		}
		if framework.Condition(db.Status.Conditions, common.TypeReady).Status != metav1.ConditionTrue ||
			synced.Status != metav1.ConditionTrue || db.Status.ObservedGeneration != db.Generation {
			out = append(out, fmt.Sprintf("%s: %s %s", n, synced.Reason, synced.Message))
		}
	}
	return out
}

// onServer lists the scenario's databases that exist on the server.
func (d *databases) onServer() []string {
	cmd := exec.Command("psql", "-X", "-tA", "-h", d.server.Host, "-p", fmt.Sprint(d.server.Port), "-U", d.server.AdminUser, "-d", "postgres",
		"-c", "SELECT datname FROM pg_database WHERE datname LIKE 'chaos\\_%' ORDER BY datname")
	cmd.Env = append(os.Environ(), "PGPASSWORD="+d.server.AdminPassword)
	out, err := cmd.CombinedOutput()
	if err != nil {
		d.t.Fatalf("list databases: %v: %s", err, out)
	}
	return strings.Fields(string(out))
}

// check compares the server with the live resources: every live Database exists once,
// and no deleted or half-made one is left behind.
func (d *databases) check(logPath string) (orphans int) {
	var want []string
	for _, n := range d.live() {
		want = append(want, dbName(n))
	}
	slices.Sort(want)
	got := d.onServer()
	for _, name := range got {
		if !slices.Contains(want, name) {
			orphans++
			d.t.Errorf("database %s is on the server but no live resource owns it", name)
			d.history(logPath, name)
		}
	}
	for _, name := range want {
		if !slices.Contains(got, name) {
			d.t.Errorf("database %s is missing on the server", name)
		}
	}
	return orphans
}

// history logs what the controller log says of the Database whose database is name,
// so that a failure on a machine that keeps nothing still tells what happened.
func (d *databases) history(logPath, name string) {
	for _, n := range d.names {
		if dbName(n) != name {
			continue
		}
		var lines []string
		_ = framework.LogLines(logPath, func(line map[string]any) {
			switch {
			case line["test"] != nil:
				lines = append(lines, "--- a controller starts")
			case line["name"] == n || line["resource"] == n:
				lines = append(lines, fmt.Sprint(line["ts"], " ", line["msg"], " ", line["error"]))
			}
		})
		d.t.Logf("what the controller logged of %s (deleted: %v; starts and kills included):\n%s", n, d.deleted[n], strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
}

// recoveredCreates counts the interrupted creates the controller carried on by itself,
// from its log.
func recoveredCreates(t *testing.T, logPath string) int {
	n := 0
	err := framework.LogLines(logPath, func(line map[string]any) {
		if line["msg"] == "recovering an interrupted create" {
			n++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
