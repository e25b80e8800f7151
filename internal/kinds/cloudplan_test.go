//go:build cloudplan

package kinds

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	azurev1 "terraplane.io/terraplane/apis/azure/v1alpha1"
	gcpv1 "terraplane.io/terraplane/apis/gcp/v1alpha1"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/workspace"
)

// TestCloudModulesPlan plans every GCP and Azure case of TestCloudKindsRenderGolden with
// the real google and azurerm providers from the tool cache's mirror, and checks the
// planned resources. It runs with make test-cloud-plan, and fails, naming the mirror,
// for each provider the mirror does not hold: it never passes without planning.
//
// google plans with a placeholder access token unless GOOGLE_CREDENTIALS (a service
// account key) and TERRAPLANE_PLAN_GCP_PROJECT are set. azurerm signs in when it is
// configured, so it needs ARM_SUBSCRIPTION_ID, ARM_TENANT_ID, ARM_CLIENT_ID and
// ARM_CLIENT_SECRET of a real service principal, and Azure's endpoints in reach.
func TestCloudModulesPlan(t *testing.T) {
	mirror := devenv.PluginMirror()
	reg := NewRegistry(nil)
	objs := planProviders(t)
	c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(objs...).Build()
	eng, err := engine.New(context.Background(), engine.Options{WorkDir: t.TempDir(), PluginMirror: mirror, TerraformPath: os.Getenv("TERRAPLANE_TERRAFORM")})
	if err != nil {
		t.Fatal(err)
	}
	for _, provider := range []string{"google", "azurerm"} {
		t.Run(provider, func(t *testing.T) { planCases(t, reg, c, eng, mirror, provider) })
	}
}

// planCases plans the cases whose kinds use provider (google: GCP, azurerm: Azure).
func planCases(t *testing.T, reg *registry.Registry, c client.Client, eng *engine.Engine, mirror, provider string) {
	for _, tc := range cloudCases {
		if strings.HasSuffix(tc.managed.Group, ".gcp.terraplane.io") != (provider == "google") {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			k, _ := reg.Managed(tc.managed)
			mg := provision(t, reg, k, tc)
			r, err := workspace.NewRenderer(c, k, "", "")
			if err != nil {
				t.Fatal(err)
			}
			r.LocalState = true
			ws, err := r.Render(context.Background(), mg)
			if err != nil {
				t.Fatal(err)
			}
			reqs, err := module.RequiredProviders(ws.Files) // the root module's pins and the module's
			if err != nil {
				t.Fatal(err)
			}
			if missing := (module.ProviderSources{Mirror: mirror}).Unavailable(context.Background(), reqs); len(missing) > 0 {
				t.Fatalf("%s cannot be planned: %s. Put the provider in %s (unpacked: <source>/<version>/<os_arch>/, or the release zip) and run make test-cloud-plan again",
					k.Terraform.ModuleDir, strings.Join(missing, "; "), mirror)
			}
			if strings.HasSuffix(tc.managed.Group, ".azure.terraplane.io") {
				requireEnv(t, "ARM_SUBSCRIPTION_ID", "ARM_TENANT_ID", "ARM_CLIENT_ID", "ARM_CLIENT_SECRET")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			plan, err := eng.Plan(ctx, ws.Workspace, engine.PlanOptions{})
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			for _, want := range planned[tc.name] {
				if !slices.ContainsFunc(plan.Changes, func(ch engine.Change) bool {
					return ch.Address == "module.this."+want && slices.Equal(ch.Actions, []string{"create"})
				}) {
					t.Errorf("the plan does not create %s:\n%s", want, plan.Text)
				}
			}
		})
	}
}

// planProviders are the gcp and azure Providers named default, with credentials from
// the environment (a placeholder for google where none is set).
func planProviders(t *testing.T) []client.Object {
	t.Helper()
	ns := "terraplane-system"
	meta := metav1.ObjectMeta{Namespace: ns, Name: "default"}
	key := orDefault(os.Getenv("GOOGLE_CREDENTIALS"), `{"type":"authorized_user","client_id":"plan","client_secret":"plan","refresh_token":"plan"}`)
	gcp := &gcpv1.Provider{ObjectMeta: meta, Spec: gcpv1.ProviderSpec{
		Project: orDefault(os.Getenv("TERRAPLANE_PLAN_GCP_PROJECT"), "acme-prod"), Region: "europe-west1",
		CredentialsSecretRef: &gcpv1.CredentialsSecretReference{Name: "gcp"}}}
	azure := &azurev1.Provider{ObjectMeta: meta, Spec: azurev1.ProviderSpec{
		SubscriptionID: os.Getenv("ARM_SUBSCRIPTION_ID"), TenantID: os.Getenv("ARM_TENANT_ID"), Location: "westeurope",
		CredentialsSecretRef: &azurev1.CredentialsSecretReference{Name: "azure"}}}
	return []client.Object{gcp, azure,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gcp"}, Data: map[string][]byte{gcpv1.CredentialsKey: []byte(key)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "azure"}, Data: map[string][]byte{
			azurev1.CredentialsClientID: []byte(orDefault(os.Getenv("ARM_CLIENT_ID"), "unset")), azurev1.CredentialsClientSecret: []byte(orDefault(os.Getenv("ARM_CLIENT_SECRET"), "unset"))}},
	}
}

func requireEnv(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if os.Getenv(n) == "" {
			t.Fatalf("azurerm signs in when it is configured: set %s (a service principal's) for make test-cloud-plan", strings.Join(names, ", "))
		}
	}
}
