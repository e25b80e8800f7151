package kinds

import (
	"context"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/render")

// Credentials of the test Providers: they must reach terraform's environment and no file.
const (
	testGCPKey       = `{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\nTESTKEY\n-----END PRIVATE KEY-----\n"}`
	testAzureID      = "00000000-1111-2222-3333-444444444444"
	testAzureSecret  = "azure-client-secret-value"
	testSubscription = "55555555-6666-7777-8888-999999999999"
	testTenant       = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
	testAWSSecret    = "aws-secret-access-key-value"
)

// cloudCase is one claim met by one AWS, GCP or Azure kind through a class.
type cloudCase struct {
	name        string
	managed     schema.GroupVersionKind
	claim       schema.GroupVersionKind
	claimSpec   map[string]any
	forProvider map[string]any // the class's
}

var cloudCases = []cloudCase{
	{"rds-postgres", gvk("database.aws", "RDSInstance"), PostgreSQLInstanceGVK,
		map[string]any{"engineVersion": "16", "storageGB": int64(50), "highAvailability": true, "encryption": true},
		map[string]any{"instanceClass": "db.t3.small", "parameters": map[string]any{"max_connections": "200"}}},
	{"rds-mysql", gvk("database.aws", "RDSInstance"), MySQLInstanceGVK,
		map[string]any{"engineVersion": "8.0"}, map[string]any{"dbSubnetGroupName": "private", "vpcSecurityGroupIDs": []any{"sg-0123"}}},
	{"replicationgroup", gvk("cache.aws", "ReplicationGroup"), RedisClusterGVK,
		map[string]any{"nodes": int64(2), "highAvailability": true}, map[string]any{"authToken": true}},
	{"ekscluster", gvk("compute.aws", "EKSCluster"), KubernetesClusterGVK,
		map[string]any{"version": "1.33", "nodeCount": int64(3)}, map[string]any{"instanceTypes": []any{"m5.large"}}},
	{"cloudsql-postgres", gvk("database.gcp", "CloudSQLInstance"), PostgreSQLInstanceGVK,
		map[string]any{"engineVersion": "16", "storageGB": int64(20), "highAvailability": true}, map[string]any{"tier": "db-custom-2-7680"}},
	{"cloudsql-mysql", gvk("database.gcp", "CloudSQLInstance"), MySQLInstanceGVK,
		map[string]any{"engineVersion": "8"}, map[string]any{"privateNetwork": "projects/p/global/networks/vpc"}},
	{"cloudstoragebucket", gvk("storage.gcp", "CloudStorageBucket"), BucketGVK,
		map[string]any{"versioning": true, "tags": map[string]any{"Team": "Orders"}}, map[string]any{"createAccessKey": true, "location": "EU"}},
	{"redisinstance", gvk("cache.gcp", "RedisInstance"), RedisClusterGVK,
		map[string]any{"engineVersion": "7.2", "nodes": int64(3)}, map[string]any{"memorySizeGB": int64(5)}},
	{"gkecluster", gvk("compute.gcp", "GKECluster"), KubernetesClusterGVK,
		map[string]any{"version": "1.33", "nodeCount": int64(2)}, map[string]any{"location": "europe-west1-b"}},
	{"postgresqlflexibleserver", gvk("database.azure", "PostgreSQLFlexibleServer"), PostgreSQLInstanceGVK,
		map[string]any{"engineVersion": "16", "storageGB": int64(100), "highAvailability": true}, map[string]any{"skuName": "GP_Standard_D2ds_v5"}},
	{"mysqlflexibleserver", gvk("database.azure", "MySQLFlexibleServer"), MySQLInstanceGVK,
		map[string]any{"engineVersion": "8.0"}, map[string]any{"resourceGroupName": "databases"}},
	{"storageaccount", gvk("storage.azure", "StorageAccount"), BucketGVK,
		map[string]any{"tags": map[string]any{"team": "orders"}}, map[string]any{"replicationType": "ZRS", "createAccessKey": true}},
	{"rediscache", gvk("cache.azure", "RedisCache"), RedisClusterGVK,
		map[string]any{"highAvailability": true}, map[string]any{}},
	{"akscluster", gvk("compute.azure", "AKSCluster"), KubernetesClusterGVK,
		map[string]any{"version": "1.33", "nodeCount": int64(3)}, map[string]any{"vmSize": "Standard_D4s_v5"}},
}

func gvk(group, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group + ".terraplane.io", Version: "v1alpha1", Kind: kind}
}

// TestCloudKindsRenderGolden provisions each AWS, GCP and Azure kind from a claim and a class,
// renders it with the renderer the managed reconciler uses and compares the root module
// and its inputs with testdata/render (go test -run TestCloudKindsRenderGolden -update
// rewrites them). Provider credentials must reach only terraform's environment.
func TestCloudKindsRenderGolden(t *testing.T) {
	reg := NewRegistry(nil)
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(testCloudProviders(t, reg.Scheme())...).Build()
	for _, tc := range cloudCases {
		t.Run(tc.name, func(t *testing.T) {
			k, ok := reg.Managed(tc.managed)
			if !ok {
				t.Fatalf("%s is not registered", tc.managed)
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
			for _, name := range []string{render.RootFile, render.VarsFile, render.ProvidersFile} {
				compareGolden(t, filepath.Join("testdata", "render", tc.name, name), ws.Files[name])
			}
			for file, content := range ws.Files {
				for _, secret := range []string{"TESTKEY", testAzureSecret, testAWSSecret} {
					if strings.Contains(string(content), secret) {
						t.Errorf("%s holds a Provider credential", file)
					}
				}
			}
			if len(ws.Env) == 0 {
				t.Error("no credentials in terraform's environment")
			}
			wantBackend := map[string]string{"secret_suffix": resource.StateSuffix(mg), "namespace": mg.GetNamespace()}
			if !maps.Equal(ws.BackendConfig, wantBackend) {
				t.Errorf("backend settings of the workspace alone: %v, want %v", ws.BackendConfig, wantBackend)
			}
			if taken := k.Terraform.ProviderConnection(mg, ws.Provider); len(taken) != 0 || len(k.Terraform.ProviderConnectionKeys) != 0 {
				t.Errorf("the kind takes the Provider's connection details %v: want none", slices.Collect(maps.Keys(taken)))
			}
		})
	}
}

// provision makes a managed resource from the case's claim and class, as the claim
// reconciler does: generic fields, then the kind's configurator.
func provision(t *testing.T, reg *registry.Registry, k *registry.ManagedKind, tc cloudCase) resource.Managed {
	t.Helper()
	claimKind := findClaimKind(t, reg, tc.claim)
	claim := claimKind.New()
	fromMap(t, map[string]any{"metadata": map[string]any{"namespace": "team-a", "name": "orders", "uid": "0a1b2c3d-4e5f-6789-abcd-ef0123456789"}, "spec": tc.claimSpec}, claim)
	class := k.NewClass()
	fromMap(t, map[string]any{"metadata": map[string]any{"namespace": "terraplane-system", "name": "standard"},
		"specTemplate": map[string]any{"providerRef": map[string]any{"name": "default"}, "forProvider": tc.forProvider}}, class)
	mg := k.New()
	mg.SetNamespace("terraplane-system")
	mg.SetName(strings.ToLower(tc.claim.Kind) + "-0a1b2c3d")
	mg.SetUID("11111111-2222-3333-4444-555555555555")
	mg.GetManagedSpec().ProviderRef = &common.LocalReference{Name: "default"}
	configure := claimKind.Configurators[tc.managed]
	if configure == nil {
		t.Fatalf("%s does not meet %s", tc.managed.Kind, tc.claim.Kind)
	}
	if err := configure(registry.Request{Claim: claim, Class: class}, mg); err != nil {
		t.Fatalf("configure: %v", err)
	}
	return mg
}

func findClaimKind(t *testing.T, reg *registry.Registry, g schema.GroupVersionKind) *registry.ClaimKind {
	t.Helper()
	for _, ck := range reg.ClaimKinds() {
		if ck.GVK == g {
			return ck
		}
	}
	t.Fatalf("claim kind %s is not registered", g)
	return nil
}

func fromMap(t *testing.T, m map[string]any, obj any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, obj); err != nil {
		t.Fatal(err)
	}
}

// testCloudProviders are a gcp, an azure and an aws Provider named default, with their
// Secrets (the aws one last). The aws Provider would hand out its keys to kinds that take
// them (connectionCredentials: Provider), so no cloud kind may take them.
func testCloudProviders(t *testing.T, scheme *runtime.Scheme) []client.Object {
	t.Helper()
	meta := map[string]any{"namespace": "terraplane-system", "name": "default"}
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "terraplane-system", Name: "gcp-key"}, Data: map[string][]byte{"credentials.json": []byte(testGCPKey)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "terraplane-system", Name: "azure-sp"}, Data: map[string][]byte{"clientID": []byte(testAzureID), "clientSecret": []byte(testAzureSecret)}},
	}
	for g, spec := range map[string]map[string]any{
		"gcp.terraplane.io":   {"project": "acme-prod", "region": "europe-west1", "credentialsSecretRef": map[string]any{"name": "gcp-key"}},
		"azure.terraplane.io": {"subscriptionID": testSubscription, "tenantID": testTenant, "location": "westeurope", "credentialsSecretRef": map[string]any{"name": "azure-sp"}},
		"aws.terraplane.io": {"region": "eu-west-1", "credentialsSecretRef": map[string]any{"name": "aws-keys"}, "connectionCredentials": "Provider",
			"skipCredentialsValidation": true, "skipRequestingAccountID": true, "skipMetadataAPICheck": true},
	} {
		obj, err := scheme.New(schema.GroupVersionKind{Group: g, Version: "v1alpha1", Kind: "Provider"})
		if err != nil {
			t.Fatal(err)
		}
		fromMap(t, map[string]any{"metadata": meta, "spec": spec}, obj)
		objs = append(objs, obj.(client.Object))
	}
	return append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "terraplane-system", Name: "aws-keys"},
		Data: map[string][]byte{"accessKeyID": []byte("AKIATEST"), "secretAccessKey": []byte(testAWSSecret)}})
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestCloudKindsRenderGolden -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
