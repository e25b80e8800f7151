package kinds

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// planned are the resources each case's plan must create (module.this. left out).
var planned = map[string][]string{
	"cloudsql-postgres":        {"google_sql_database_instance.this", "google_sql_database.this", "google_sql_user.this", "random_password.this"},
	"cloudsql-mysql":           {"google_sql_database_instance.this", "google_sql_database.this", "google_sql_user.this"},
	"cloudstoragebucket":       {"google_storage_bucket.this", "google_service_account.this[0]", "google_storage_hmac_key.this[0]"},
	"redisinstance":            {"google_redis_instance.this"},
	"gkecluster":               {"google_container_cluster.this", "google_container_node_pool.this"},
	"postgresqlflexibleserver": {"azurerm_resource_group.this[0]", "azurerm_postgresql_flexible_server.this", "azurerm_postgresql_flexible_server_database.this"},
	"mysqlflexibleserver":      {"azurerm_mysql_flexible_server.this", "azurerm_mysql_flexible_database.this"},
	"storageaccount":           {"azurerm_storage_account.this", "azurerm_storage_container.this"},
	"rediscache":               {"azurerm_redis_cache.this"},
	"akscluster":               {"azurerm_kubernetes_cluster.this"},
}

// renamed is each GCP and Azure case's name field: changing it replaces the resource.
var renamed = map[string]string{
	"cloudsql-postgres": "instanceName", "cloudsql-mysql": "instanceName", "cloudstoragebucket": "bucketName",
	"redisinstance": "instanceName", "gkecluster": "clusterName", "postgresqlflexibleserver": "serverName",
	"mysqlflexibleserver": "serverName", "storageaccount": "accountName", "rediscache": "cacheName", "akscluster": "clusterName",
}

// TestCloudKindsOnStandin runs every GCP and Azure case of TestCloudKindsRenderGolden on
// the stand-in providers (test/standin-provider, serving the real google 6.50.0 and
// azurerm 4.55.0 schemas): the rendered workspace creates what the kind promises, every
// connection key's output has a value, an edit of the labels (tags) updates in place, a
// new name replaces, and destroy deletes it all. The stand-in's call log shows what
// terraform asked.
func TestCloudKindsOnStandin(t *testing.T) {
	if testing.Short() {
		t.Skip("runs terraform")
	}
	eng, logPath := standinEngine(t)
	reg := NewRegistry(nil)
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(testCloudProviders(t, reg.Scheme())...).Build()
	for _, tc := range cloudCases {
		if planned[tc.name] == nil {
			continue // an AWS case: the real aws provider runs those
		}
		t.Run(tc.name, func(t *testing.T) {
			k, _ := reg.Managed(tc.managed)
			mg := provision(t, reg, k, tc)
			r, err := workspace.NewRenderer(c, k, "", "")
			if err != nil {
				t.Fatal(err)
			}
			r.LocalState = true
			render := func() engine.Workspace {
				ws, err := r.Render(context.Background(), mg)
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				if ws.Env == nil {
					ws.Env = map[string]string{}
				}
				ws.Env["TERRAPLANE_STANDIN_LOG"] = logPath // terraform's environment is only what the workspace sets
				return ws.Workspace
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			createAndCheck(ctx, t, eng, k, mg, render(), tc.name)
			labels := "labels"
			if strings.HasSuffix(tc.managed.Group, ".azure.terraplane.io") {
				labels = "tags"
			}
			setForProvider(t, mg, labels, map[string]any{"edited": "yes"})
			expectActions(ctx, t, eng, render(), "update")
			setForProvider(t, mg, renamed[tc.name], "renamed2") // a name every cloud takes
			expectActions(ctx, t, eng, render(), "delete", "create")
			if err := eng.Destroy(ctx, render()); err != nil {
				t.Fatalf("destroy: %v", err)
			}
		})
	}
	expectCalls(t, logPath)
}

// standinEngine is an engine whose mirror holds the stand-ins beside the toolchain's
// providers, and the stand-ins' call log.
func standinEngine(t *testing.T) (*engine.Engine, string) {
	t.Helper()
	mirror := t.TempDir()
	if err := devenv.TestMirror(mirror); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	eng, err := engine.New(context.Background(), engine.Options{WorkDir: t.TempDir(), PluginMirror: mirror, TerraformPath: os.Getenv("TERRAPLANE_TERRAFORM")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Stop)
	return eng, logPath
}

// createAndCheck plans the create, applies it, and checks the outputs the kind reads.
func createAndCheck(ctx context.Context, t *testing.T, eng *engine.Engine, k *registry.ManagedKind, mg resource.Managed, ws engine.Workspace, name string) {
	t.Helper()
	plan, err := eng.Plan(ctx, ws, engine.PlanOptions{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	for _, want := range planned[name] {
		if !slices.ContainsFunc(plan.Changes, func(ch engine.Change) bool {
			return ch.Address == "module.this."+want && slices.Equal(ch.Actions, []string{"create"})
		}) {
			t.Errorf("the plan does not create %s:\n%s", want, plan.Text)
		}
	}
	res, err := eng.ApplyPlan(ctx, ws, plan)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	keys := k.Terraform.ConnectionKeys
	if k.Terraform.ConnectionKeysFor != nil {
		keys = k.Terraform.ConnectionKeysFor(mg)
	}
	for output, key := range keys {
		if o, ok := res.Outputs[output]; ok && (string(o.Value) == "null" || string(o.Value) == `""`) {
			t.Errorf("connection key %s: output %s is %s", key, output, o.Value)
		}
	}
	for output, o := range res.Outputs {
		if !o.Sensitive && string(o.Value) == "null" {
			t.Logf("output %s is null", output)
		}
	}
	again, err := eng.Plan(ctx, ws, engine.PlanOptions{})
	if err != nil || len(again.Changes) != 0 {
		t.Fatalf("a second plan changes %v (%v): the stand-in drifted", again, err)
	}
}

// expectActions plans ws and wants every change to have exactly actions.
func expectActions(ctx context.Context, t *testing.T, eng *engine.Engine, ws engine.Workspace, actions ...string) {
	t.Helper()
	plan, err := eng.Plan(ctx, ws, engine.PlanOptions{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	found := false
	for _, ch := range plan.Changes {
		if slices.Equal(ch.Actions, actions) {
			found = true
		}
	}
	if !found {
		t.Errorf("the plan has no %v change:\n%s", actions, plan.Text)
	}
	if _, err := eng.ApplyPlan(ctx, ws, plan); err != nil {
		t.Fatalf("apply: %v", err)
	}
}

// setForProvider sets spec.forProvider.field of mg.
func setForProvider(t *testing.T, mg resource.Managed, field string, value any) {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(mg)
	if err != nil {
		t.Fatal(err)
	}
	m["spec"].(map[string]any)["forProvider"].(map[string]any)[field] = value
	fromMap(t, m, mg)
}

// expectCalls checks the stand-ins' log: both providers were configured, and each
// resource type was created, updated, replaced and deleted through them.
func expectCalls(t *testing.T, logPath string) {
	t.Helper()
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatalf("the stand-ins logged nothing: %v", err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var call struct{ Provider, Call, Type, Action string }
		if err := json.Unmarshal(sc.Bytes(), &call); err != nil {
			t.Fatal(err)
		}
		seen[call.Provider+" "+call.Call+" "+call.Type+" "+call.Action] = true
	}
	for _, want := range []string{"google ConfigureProvider  ", "azurerm ConfigureProvider  ",
		"google ApplyResourceChange google_sql_database_instance create", "google PlanResourceChange google_redis_instance update",
		"google PlanResourceChange google_container_cluster replace", "azurerm ApplyResourceChange azurerm_kubernetes_cluster delete",
		"azurerm PlanResourceChange azurerm_storage_account replace"} {
		if !seen[want] {
			t.Errorf("the stand-ins were not asked %q", want)
		}
	}
}
