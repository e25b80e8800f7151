package kinds

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	azurecomputev1 "terraplane.io/terraplane/apis/azure/compute/v1alpha1"
	azurestoragev1 "terraplane.io/terraplane/apis/azure/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	gcpcachev1 "terraplane.io/terraplane/apis/gcp/cache/v1alpha1"
	gcpcomputev1 "terraplane.io/terraplane/apis/gcp/compute/v1alpha1"
	gcpdbv1 "terraplane.io/terraplane/apis/gcp/database/v1alpha1"
	gcpstoragev1 "terraplane.io/terraplane/apis/gcp/storage/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// TestCloudRecoverCreate provisions each GCP and Azure kind from a claim, resolves its
// Provider as the reconciler does, and checks what an interrupted create imports: every
// object the module names after the claim, by the ID its provider's import
// documentation gives, at an address the module has; the workspace renders with them.
func TestCloudRecoverCreate(t *testing.T) {
	const (
		name = "team-a-orders-0a1b2c3d"
		sql  = "projects/acme-prod/instances/" + name
		rg   = "/subscriptions/" + testSubscription + "/resourceGroups/" + name + "-rg"
		sa   = "/subscriptions/" + testSubscription + "/resourceGroups/teamaorders0a1b2c3d-rg"
	)
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"cloudsql-postgres", []string{
			"google_sql_database_instance.this=" + sql,
			"google_sql_database.this=" + sql + "/databases/team_a_orders_0a1b2c3d",
			"google_sql_user.this=acme-prod/" + name + "/team_a_orders_0a1b2c3d",
		}},
		{"cloudsql-mysql", []string{
			"google_sql_database_instance.this=" + sql,
			"google_sql_database.this=" + sql + "/databases/team_a_orders_0a1b2c3d",
			"google_sql_user.this=acme-prod/" + name + "/%/team_a_orders_0a1b2c3d",
		}},
		{"cloudstoragebucket", []string{
			"google_storage_bucket.this=" + name,
			// sha1("team-a-orders-0a1b2c3d")[:20], as the module names the account
			"google_service_account.this[0]=projects/acme-prod/serviceAccounts/bkt-1fa7a69b8d79ab4aecfc@acme-prod.iam.gserviceaccount.com",
		}},
		{"redisinstance", []string{"google_redis_instance.this=projects/acme-prod/locations/europe-west1/instances/" + name}},
		{"gkecluster", []string{
			"google_container_cluster.this=projects/acme-prod/locations/europe-west1-b/clusters/" + name,
			"google_container_node_pool.this=acme-prod/europe-west1-b/" + name + "/default",
		}},
		{"postgresqlflexibleserver", []string{
			"azurerm_resource_group.this[0]=" + rg,
			"azurerm_postgresql_flexible_server.this=" + rg + "/providers/Microsoft.DBforPostgreSQL/flexibleServers/" + name,
			"azurerm_postgresql_flexible_server_database.this=" + rg + "/providers/Microsoft.DBforPostgreSQL/flexibleServers/" + name + "/databases/team_a_orders_0a1b2c3d",
		}},
		{"mysqlflexibleserver", []string{ // in the class's resource group, which the module does not make
			"azurerm_mysql_flexible_server.this=/subscriptions/" + testSubscription + "/resourceGroups/databases/providers/Microsoft.DBforMySQL/flexibleServers/" + name,
			"azurerm_mysql_flexible_database.this=/subscriptions/" + testSubscription + "/resourceGroups/databases/providers/Microsoft.DBforMySQL/flexibleServers/" + name + "/databases/team_a_orders_0a1b2c3d",
		}},
		{"storageaccount", []string{
			"azurerm_resource_group.this[0]=" + sa,
			"azurerm_storage_account.this=" + sa + "/providers/Microsoft.Storage/storageAccounts/teamaorders0a1b2c3d",
			"azurerm_storage_container.this=" + sa + "/providers/Microsoft.Storage/storageAccounts/teamaorders0a1b2c3d/blobServices/default/containers/data",
		}},
		{"rediscache", []string{
			"azurerm_resource_group.this[0]=" + rg,
			"azurerm_redis_cache.this=" + rg + "/providers/Microsoft.Cache/redis/" + name,
		}},
		{"akscluster", []string{
			"azurerm_resource_group.this[0]=" + rg,
			"azurerm_kubernetes_cluster.this=" + rg + "/providers/Microsoft.ContainerService/managedClusters/" + name,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, recoverCase(t, tc.name)); diff != "" {
				t.Errorf("imports (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCloudRecoverCreateUnfixed checks that a GCP or Azure resource whose identity is
// not fixed in advance, or whose Provider did not say where it lives, is left to the
// user (CreateInterrupted) rather than imported by a guessed ID.
func TestCloudRecoverCreateUnfixed(t *testing.T) {
	gcp := &registry.ProviderConfig{Inputs: map[string]any{"project": "acme-prod", "region": "europe-west1"}}
	azure := &registry.ProviderConfig{Providers: []render.Provider{{Name: "azurerm", Config: map[string]any{"subscription_id": testSubscription}}}}
	unnamedSQL := &gcpdbv1.CloudSQLInstance{} // Terraform picks the name
	named := &gcpcachev1.RedisInstance{}
	named.Spec.ForProvider.InstanceName = "cache"
	gke := &gcpcomputev1.GKECluster{}
	gke.Spec.ForProvider.ClusterName = "k"
	aks := &azurecomputev1.AKSCluster{}
	aks.Spec.ForProvider.ClusterName = "k"
	for _, tc := range []struct {
		name    string
		recover recoverFunc
		mg      resource.Managed
		pc      *registry.ProviderConfig
	}{
		{"cloud sql without a name", recoverCloudSQLInstance, unnamedSQL, gcp},
		{"bucket without a name", recoverCloudStorageBucket, &gcpstoragev1.CloudStorageBucket{}, gcp},
		{"memorystore without a project", recoverRedisInstance, named, &registry.ProviderConfig{}},
		{"gke without a provider", recoverGKECluster, gke, nil},
		{"gke without a location", recoverGKECluster, gke, &registry.ProviderConfig{Inputs: map[string]any{"project": "acme-prod"}}},
		{"aks without a subscription", recoverAKSCluster, aks, &registry.ProviderConfig{}},
		{"storage account without a name", recoverStorageAccount, &azurestoragev1.StorageAccount{}, azure},
		{"another kind", recoverRedisCache, named, azure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			imports, ok := tc.recover(tc.mg, tc.pc)
			if diff := cmp.Diff([]common.ImportInstruction(nil), imports); diff != "" || ok {
				t.Errorf("ok %v, imports (-want +got):\n%s", ok, diff)
			}
		})
	}
}

// recoverCase provisions the cloud case name, renders it, checks that its kind's
// recovery imports only resources the module has and that the workspace renders with
// them, and returns the imports as address=id.
func recoverCase(t *testing.T, name string) []string {
	t.Helper()
	reg := NewRegistry(nil)
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(testCloudProviders(t, reg.Scheme())...).Build()
	tc := cloudCases[slices.IndexFunc(cloudCases, func(c cloudCase) bool { return c.name == name })]
	k, _ := reg.Managed(tc.managed)
	if k.Terraform.RecoverCreate == nil {
		t.Fatalf("%s has no create recovery", tc.managed.Kind)
	}
	mg := provision(t, reg, k, tc)
	r, err := workspace.NewRenderer(c, k, "", "")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := r.Render(context.Background(), mg)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	imports, ok := k.Terraform.RecoverCreate(mg, ws.Provider)
	if !ok {
		t.Fatal("no recovery for a resource named after its claim")
	}
	main, err := fs.ReadFile(k.Terraform.Modules, k.Terraform.ModuleDir+"/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, im := range imports {
		typ, rest, _ := strings.Cut(im.Address, ".")
		res := regexp.MustCompile(`^\w+`).FindString(rest)
		if !strings.Contains(string(main), fmt.Sprintf("resource %q %q", typ, res)) {
			t.Errorf("the module %s has no resource %s.%s", k.Terraform.ModuleDir, typ, res)
		}
		got = append(got, im.Address+"="+im.ID)
	}
	mg.GetManagedSpec().Imports = imports
	if _, err := r.Render(context.Background(), mg); err != nil {
		t.Errorf("render with the imports: %v", err)
	}
	return got
}
