package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	tfengine "terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/kinds"
)

// cloudKindCase is one GCP or Azure managed kind, met through a claim and two classes.
type cloudKindCase struct {
	name      string         // the case: its namespace, Provider and classes are named after it
	managed   string         // the managed kind as <category>.<cloud>/<Kind>
	claim     string         // the claim kind as <category>/<Kind>
	class     map[string]any // the non-portable class's forProvider
	claimSpec map[string]any
	inPlace   map[string]any // claim fields an edit sets that the module updates in place
	updated   string         // the resource type the in-place edit updates
	replacing cloudEdit      // an edit that replaces resources
	replaced  []string       // the resource types the replacing edit replaces
	destroyed []string       // resource types whose deleted state names the claim (its UID or the case)
}

// cloudEdit merges set into a Provider's spec (on "provider") or a non-portable class's
// specTemplate.forProvider (on "class").
type cloudEdit struct {
	on  string
	set map[string]any
}

// Replacing edits: the fields that replace resources but are not immutable in the API
// (those the API refuses before terraform sees them).
var (
	gcpRegion     = cloudEdit{"provider", map[string]any{"region": "europe-west4"}}
	azureLocation = cloudEdit{"provider", map[string]any{"location": "northeurope"}}
)

// cloudKindCases are every GCP and Azure kind, with each claim kind it meets
// (TestCloudKindsThroughController checks the list against the registry).
var cloudKindCases = []cloudKindCase{
	{name: "cloudsqlpg", managed: "database.gcp/CloudSQLInstance", claim: "database/PostgreSQLInstance",
		class: map[string]any{"engine": "POSTGRES", "tier": "db-custom-1-3840"}, claimSpec: map[string]any{"engineVersion": "16"},
		inPlace: map[string]any{"highAvailability": true}, updated: "google_sql_database_instance",
		replacing: cloudEdit{"class", map[string]any{"username": "owner_cloudsqlpg"}}, replaced: []string{"google_sql_user"},
		destroyed: []string{"google_sql_database_instance", "google_sql_database", "google_sql_user"}},
	{name: "cloudsqlmysql", managed: "database.gcp/CloudSQLInstance", claim: "database/MySQLInstance",
		class: map[string]any{"engine": "MYSQL"}, claimSpec: map[string]any{"engineVersion": "8.0"},
		inPlace: map[string]any{"highAvailability": true}, updated: "google_sql_database_instance",
		replacing: cloudEdit{"class", map[string]any{"username": "owner_cloudsqlmysql"}}, replaced: []string{"google_sql_user"},
		destroyed: []string{"google_sql_database_instance", "google_sql_database", "google_sql_user"}},
	{name: "gcs", managed: "storage.gcp/CloudStorageBucket", claim: "storage/Bucket",
		class: map[string]any{"createAccessKey": true}, claimSpec: map[string]any{"tags": map[string]any{"team": "orders"}},
		inPlace: map[string]any{"tags": map[string]any{"team": "payments"}}, updated: "google_storage_bucket",
		replacing: gcpRegion, replaced: []string{"google_storage_bucket", "google_storage_bucket_iam_member"},
		destroyed: []string{"google_storage_bucket", "google_service_account", "google_storage_bucket_iam_member"}},
	{name: "memorystore", managed: "cache.gcp/RedisInstance", claim: "cache/RedisCluster",
		class: map[string]any{"memorySizeGB": int64(1)}, claimSpec: map[string]any{"engineVersion": "7.2", "nodes": int64(3)},
		inPlace: map[string]any{"nodes": int64(4)}, updated: "google_redis_instance",
		replacing: gcpRegion, replaced: []string{"google_redis_instance"}, destroyed: []string{"google_redis_instance"}},
	{name: "gke", managed: "compute.gcp/GKECluster", claim: "compute/KubernetesCluster",
		class: map[string]any{"labels": map[string]any{"e2e-case": "gke"}}, claimSpec: map[string]any{"nodeCount": int64(1)},
		inPlace: map[string]any{"nodeCount": int64(2)}, updated: "google_container_node_pool",
		replacing: gcpRegion, replaced: []string{"google_container_cluster", "google_container_node_pool"},
		destroyed: []string{"google_container_cluster", "google_container_node_pool"}},
	{name: "azurepg", managed: "database.azure/PostgreSQLFlexibleServer", claim: "database/PostgreSQLInstance",
		class: map[string]any{}, claimSpec: map[string]any{"engineVersion": "16", "storageGB": int64(32)},
		inPlace: map[string]any{"storageGB": int64(64)}, updated: "azurerm_postgresql_flexible_server",
		replacing: azureLocation, replaced: []string{"azurerm_resource_group", "azurerm_postgresql_flexible_server", "azurerm_postgresql_flexible_server_database"},
		destroyed: []string{"azurerm_resource_group", "azurerm_postgresql_flexible_server", "azurerm_postgresql_flexible_server_database"}},
	{name: "azuremysql", managed: "database.azure/MySQLFlexibleServer", claim: "database/MySQLInstance",
		class: map[string]any{}, claimSpec: map[string]any{"engineVersion": "8.0", "storageGB": int64(20)},
		inPlace: map[string]any{"storageGB": int64(40)}, updated: "azurerm_mysql_flexible_server",
		replacing: azureLocation, replaced: []string{"azurerm_resource_group", "azurerm_mysql_flexible_server", "azurerm_mysql_flexible_database"},
		destroyed: []string{"azurerm_resource_group", "azurerm_mysql_flexible_server", "azurerm_mysql_flexible_database"}},
	{name: "blob", managed: "storage.azure/StorageAccount", claim: "storage/Bucket",
		class: map[string]any{"createAccessKey": true, "containerName": "blob"}, claimSpec: map[string]any{"tags": map[string]any{"team": "orders"}},
		inPlace: map[string]any{"tags": map[string]any{"team": "payments"}}, updated: "azurerm_storage_account",
		replacing: azureLocation, replaced: []string{"azurerm_resource_group", "azurerm_storage_account", "azurerm_storage_container"},
		destroyed: []string{"azurerm_resource_group", "azurerm_storage_account", "azurerm_storage_container"}},
	{name: "azureredis", managed: "cache.azure/RedisCache", claim: "cache/RedisCluster",
		class: map[string]any{}, claimSpec: map[string]any{"nodes": int64(1)},
		inPlace: map[string]any{"highAvailability": true}, updated: "azurerm_redis_cache",
		replacing: azureLocation, replaced: []string{"azurerm_resource_group", "azurerm_redis_cache"},
		destroyed: []string{"azurerm_resource_group", "azurerm_redis_cache"}},
	{name: "aks", managed: "compute.azure/AKSCluster", claim: "compute/KubernetesCluster",
		class: map[string]any{}, claimSpec: map[string]any{"nodeCount": int64(1)},
		inPlace: map[string]any{"nodeCount": int64(2)}, updated: "azurerm_kubernetes_cluster",
		replacing: azureLocation, replaced: []string{"azurerm_resource_group", "azurerm_kubernetes_cluster"},
		destroyed: []string{"azurerm_resource_group", "azurerm_kubernetes_cluster"}},
}

// TestCloudKindsThroughController runs every GCP and Azure kind through the controller on
// the stand-in providers (test/standin-provider: the real google 6.50.0 and azurerm 4.55.0
// schemas, under their real source addresses in this test's provider mirror). For each,
// in parallel: a Provider with fake credentials, a non-portable and a portable class and
// a claim become Ready; the connection Secret holds the keys the kind's docs page
// promises, and status.atProvider the fields it lists; a claim edit updates in place
// without approval; an edit that replaces resources is refused (DestructiveChangeRefused)
// until spec.approvedPlan names the plan, then applied; deleting the claim destroys it
// all, as the stand-ins' call log shows.
func TestCloudKindsThroughController(t *testing.T) {
	expectEveryCloudKind(t)
	ctx := context.Background()
	g := NewWithT(t)
	mirror, calls := t.TempDir(), filepath.Join(t.TempDir(), "standin-calls.jsonl")
	g.Expect(devenv.TestMirrorWithLog(mirror, calls)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{Engine: tfengine.Options{PluginMirror: mirror, MaxConcurrent: 4}})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	start := time.Now()
	var wg sync.WaitGroup // all at once, not -parallel (GOMAXPROCS) at a time: they mostly wait
	for _, tc := range cloudKindCases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(tc.name, func(t *testing.T) { runCloudKind(ctx, t, tc, calls) })
		}()
	}
	wg.Wait()
	t.Logf("TIMING every GCP and Azure kind through its lifecycle in %s", time.Since(start).Round(time.Second))
}

// runCloudKind takes one case through its lifecycle, phase by phase.
func runCloudKind(ctx context.Context, t *testing.T, tc cloudKindCase, calls string) {
	g := NewWithT(t)
	phase := func(name string, f func()) {
		t.Helper()
		By(t, name)
		start := time.Now()
		f()
		t.Logf("TIMING %s: %s in %s", tc.name, name, time.Since(start).Round(time.Second))
	}
	c := newCloudClaim(tc)
	phase("Provider, classes and claim become Ready", func() { c.create(ctx, g) })
	phase("the connection Secret and status.atProvider hold what the docs promise", func() { c.expectDocumented(ctx, g) })
	phase("a claim edit updates in place, without approval", func() { c.editInPlace(ctx, g) })
	phase("a replacing edit is refused until approved, then applied", func() { c.editReplacing(ctx, g) })
	phase("deleting the claim destroys what it made", func() { c.deleteAndExpectDestroy(ctx, g, calls) })
}

// expectEveryCloudKind fails when a GCP or Azure managed kind, or a claim kind one meets,
// has no case.
func expectEveryCloudKind(t *testing.T) {
	t.Helper()
	have := map[string]bool{}
	for _, tc := range cloudKindCases {
		have[tc.managed+" "+tc.claim] = true
	}
	for _, k := range kinds.NewRegistry(nil).ManagedKinds() {
		category, cloud, _ := strings.Cut(strings.TrimSuffix(k.GVK.Group, ".terraplane.io"), ".")
		if cloud != "gcp" && cloud != "azure" {
			continue
		}
		for claim := range k.Meets {
			if key := category + "." + cloud + "/" + k.GVK.Kind + " " + shortKind(claim); !have[key] {
				t.Errorf("no case runs %s", key)
			}
		}
	}
}

// shortKind is a kind as <category>/<Kind>, the group's .terraplane.io left out.
func shortKind(gvk schema.GroupVersionKind) string {
	return strings.TrimSuffix(gvk.Group, ".terraplane.io") + "/" + gvk.Kind
}
