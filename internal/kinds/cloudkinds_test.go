package kinds

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	awscachev1 "terraplane.io/terraplane/apis/aws/cache/v1alpha1"
	awsdbv1 "terraplane.io/terraplane/apis/aws/database/v1alpha1"
	azurestoragev1 "terraplane.io/terraplane/apis/azure/storage/v1alpha1"
	azurev1 "terraplane.io/terraplane/apis/azure/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	gcpcomputev1 "terraplane.io/terraplane/apis/gcp/compute/v1alpha1"
	gcpstoragev1 "terraplane.io/terraplane/apis/gcp/storage/v1alpha1"
	gcpv1 "terraplane.io/terraplane/apis/gcp/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// TestCloudKindsRefuse checks that a class refuses, with ClassCannotSatisfy, the claims
// its kind cannot meet.
func TestCloudKindsRefuse(t *testing.T) {
	reg := NewRegistry(nil)
	cases := []cloudCase{
		{"postgres class for a mysql claim", gvk("database.gcp", "CloudSQLInstance"), MySQLInstanceGVK, map[string]any{}, map[string]any{"engine": "POSTGRES"}},
		{"version mismatch", gvk("database.gcp", "CloudSQLInstance"), PostgreSQLInstanceGVK, map[string]any{"engineVersion": "14"}, map[string]any{"engineVersion": "16"}},
		{"burstable with ha", gvk("database.azure", "PostgreSQLFlexibleServer"), PostgreSQLInstanceGVK, map[string]any{"highAvailability": true}, map[string]any{}},
		{"burstable mysql with ha", gvk("database.azure", "MySQLFlexibleServer"), MySQLInstanceGVK, map[string]any{"highAvailability": true}, map[string]any{"skuName": "B_Standard_B2s"}},
		{"memorystore nodes", gvk("cache.gcp", "RedisInstance"), RedisClusterGVK, map[string]any{"nodes": int64(7)}, map[string]any{}},
		{"azure redis 7", gvk("cache.azure", "RedisCache"), RedisClusterGVK, map[string]any{"engineVersion": "7.2"}, map[string]any{}},
		{"azure redis nodes without premium", gvk("cache.azure", "RedisCache"), RedisClusterGVK, map[string]any{"nodes": int64(3)}, map[string]any{"skuName": "Standard"}},
		{"gke version", gvk("compute.gcp", "GKECluster"), KubernetesClusterGVK, map[string]any{"version": "1.32"}, map[string]any{"kubernetesVersion": "1.33"}},
		{"rds mysql class for a postgres claim", gvk("database.aws", "RDSInstance"), PostgreSQLInstanceGVK, map[string]any{}, map[string]any{"engine": "mysql"}},
		{"rds version mismatch", gvk("database.aws", "RDSInstance"), MySQLInstanceGVK, map[string]any{"engineVersion": "5.7"}, map[string]any{"engineVersion": "8.0"}},
		{"elasticache nodes", gvk("cache.aws", "ReplicationGroup"), RedisClusterGVK, map[string]any{"nodes": int64(7)}, map[string]any{}},
		{"elasticache version", gvk("cache.aws", "ReplicationGroup"), RedisClusterGVK, map[string]any{"engineVersion": "6.2"}, map[string]any{"engineVersion": "7.1"}},
		{"eks version", gvk("compute.aws", "EKSCluster"), KubernetesClusterGVK, map[string]any{"version": "1.32"}, map[string]any{"kubernetesVersion": "1.33"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, _ := reg.Managed(tc.managed)
			claimKind := findClaimKind(t, reg, tc.claim)
			claim := claimKind.New()
			fromMap(t, map[string]any{"metadata": map[string]any{"namespace": "a", "name": "b", "uid": "12345678"}, "spec": tc.claimSpec}, claim)
			class := k.NewClass()
			fromMap(t, map[string]any{"metadata": map[string]any{"name": "standard"}, "specTemplate": map[string]any{"forProvider": tc.forProvider}}, class)
			err := claimKind.Configurators[tc.managed](registry.Request{Claim: claim, Class: class}, k.New())
			if u, ok := resource.AsUserError(err); !ok || u.Reason != "ClassCannotSatisfy" {
				t.Fatalf("got %v, want ClassCannotSatisfy", err)
			}
		})
	}
}

// TestCloudKindsFill checks what each configurator maps from a claim beyond the golden
// cases: the class's own values win where the claim leaves them open.
func TestCloudKindsFill(t *testing.T) {
	reg := NewRegistry(nil)
	k, _ := reg.Managed(gvk("compute.gcp", "GKECluster"))
	mg := provision(t, reg, k, cloudCase{"gke", k.GVK, KubernetesClusterGVK, map[string]any{}, map[string]any{"nodeCount": int64(4), "clusterName": "fixed"}})
	p := mg.(*gcpcomputev1.GKECluster).Spec.ForProvider
	if p.NodeCount != 4 || p.ClusterName != "fixed" || p.KubernetesVersion != "" {
		t.Errorf("forProvider = %+v, want the class's nodeCount and clusterName", p)
	}
	for _, c := range []struct{ engine, in, want string }{
		{"POSTGRES", "16.2", "16"}, {"MYSQL", "8", "8.0"}, {"MYSQL", "5", "5.7"}, {"MYSQL", "8.4", "8.4"}, {"POSTGRES", "", ""},
	} {
		if got := cloudSQLVersion(c.engine, c.in); got != c.want {
			t.Errorf("cloudSQLVersion(%s, %q) = %q, want %q", c.engine, c.in, got, c.want)
		}
	}
	k, _ = reg.Managed(gvk("cache.aws", "ReplicationGroup"))
	mg = provision(t, reg, k, cloudCase{"ha redis", k.GVK, RedisClusterGVK, map[string]any{"highAvailability": true}, map[string]any{}})
	if rg := mg.(*awscachev1.ReplicationGroup).Spec.ForProvider; rg.Nodes != 2 || !rg.HighAvailability {
		t.Errorf("a highly available Redis claim gives %+v, want 2 nodes with failover", rg)
	}
	k, _ = reg.Managed(gvk("database.aws", "RDSInstance"))
	mg = provision(t, reg, k, cloudCase{"small rds", k.GVK, MySQLInstanceGVK, map[string]any{"storageGB": int64(5), "encryption": true}, map[string]any{}})
	if db := mg.(*awsdbv1.RDSInstance).Spec.ForProvider; db.StorageGB != 20 || !db.Encryption || db.Engine != "mysql" || len(db.Username) > 16 {
		t.Errorf("a 5 GB encrypted MySQL claim gives %+v, want 20 GB (RDS's least), encrypted, mysql, a username of at most 16 characters", db)
	}
	if got := DNSName("9ns", strings.Repeat("x", 80), "abcdef12-34", 40); len(got) > 40 || !strings.HasPrefix(got, "tp-9ns-") || !strings.HasSuffix(got, "-abcdef12") {
		t.Errorf("DNSName = %q", got)
	}
	if got := CompactName("Team-A", "photos.raw", "0a1b2c3d-99", 24); got != "teamaphotosraw0a1b2c3d" {
		t.Errorf("CompactName = %q", got)
	}
	if got := CompactName(strings.Repeat("n", 30), "c", "0a1b2c3d", 24); len(got) != 24 {
		t.Errorf("long CompactName = %q", got)
	}
	labels := gcpLabels(nil, map[string]string{"Cost Center": "R&D", "1st": "x"})
	if labels["cost_center"] != "r_d" || labels["t_1st"] != "x" {
		t.Errorf("gcpLabels = %v", labels)
	}
}

// TestCloudProviderCredentials checks where each Provider's credentials go: Secret
// values only into terraform's environment, injected identities as injected, a missing
// Secret as a user error, and never a connection detail.
func TestCloudProviderCredentials(t *testing.T) {
	reg := NewRegistry(nil)
	ctx := context.Background()
	resolve := func(injected, withSecrets bool) (gcp, azure *registry.ProviderConfig, gcpErr, azureErr error) {
		objs := testCloudProviders(t, reg.Scheme())
		if !withSecrets {
			objs = objs[2:]
		}
		for _, o := range objs {
			switch p := o.(type) {
			case *gcpv1.Provider:
				if injected {
					p.Spec.Credentials = &gcpv1.Credentials{Source: gcpv1.CredentialsSourceInjectedIdentity}
				}
			case *azurev1.Provider:
				if injected {
					p.Spec.Credentials = &azurev1.Credentials{Source: azurev1.CredentialsSourceInjectedIdentity}
				}
			}
		}
		c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(objs...).Build()
		ref := &common.LocalReference{Name: "default"}
		b := &gcpstoragev1.CloudStorageBucket{}
		b.Namespace, b.Spec.ProviderRef = "terraplane-system", ref
		a := &azurestoragev1.StorageAccount{}
		a.Namespace, a.Spec.ProviderRef = "terraplane-system", ref
		gcp, gcpErr = resolveGCPProvider(ctx, c, b)
		azure, azureErr = resolveAzureProvider(ctx, c, a)
		return gcp, azure, gcpErr, azureErr
	}

	gcp, azure, gerr, aerr := resolve(false, true)
	if gerr != nil || len(gcp.Env) != 1 || gcp.Env["GOOGLE_CREDENTIALS"] != testGCPKey || len(gcp.Connection) != 0 {
		t.Fatalf("gcp: %+v, %v", gcp, gerr)
	}
	if aerr != nil || len(azure.Env) != 2 || azure.Env["ARM_CLIENT_ID"] != testAzureID || azure.Env["ARM_CLIENT_SECRET"] != testAzureSecret || len(azure.Connection) != 0 {
		t.Fatalf("azure: %+v, %v", azure, aerr)
	}
	if cfg := azure.Providers[0].Config; cfg["subscription_id"] != testSubscription || cfg["tenant_id"] != testTenant || len(cfg) != 3 {
		t.Errorf("azurerm block = %v", cfg)
	}

	_, _, gerr, aerr = resolve(false, false)
	if u, ok := resource.AsUserError(gerr); !ok || u.Reason != "CredentialsSecretNotFound" {
		t.Errorf("gcp without its Secret: %v", gerr)
	}
	if u, ok := resource.AsUserError(aerr); !ok || u.Reason != "CredentialsSecretNotFound" {
		t.Errorf("azure without its Secret: %v", aerr)
	}

	for _, k := range append(gcpIdentityEnv, azureIdentityEnv...) {
		t.Setenv(k, "")
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "/var/run/secrets/gcp/config.json")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-for-google") // nothing else of the controller's environment
	gcp, azure, gerr, aerr = resolve(true, false)
	if gerr != nil || len(gcp.Env) != 1 || gcp.Env["GOOGLE_APPLICATION_CREDENTIALS"] == "" {
		t.Fatalf("gcp injected: %v, %v", gcp, gerr)
	}
	if aerr != nil || len(azure.Env) != 0 || azure.Providers[0].Config["use_msi"] != true {
		t.Fatalf("azure managed identity: %+v, %v", azure, aerr)
	}
	t.Setenv("AZURE_CLIENT_ID", testAzureID)
	t.Setenv("AZURE_TENANT_ID", testTenant)
	t.Setenv("AZURE_FEDERATED_TOKEN_FILE", "/var/run/secrets/azure/tokens/azure-identity-token")
	_, azure, _, aerr = resolve(true, false)
	if aerr != nil || len(azure.Env) != 3 || azure.Providers[0].Config["use_aks_workload_identity"] != true || azure.Providers[0].Config["use_msi"] != nil {
		t.Fatalf("azure workload identity: %+v, %v", azure, aerr)
	}
}
