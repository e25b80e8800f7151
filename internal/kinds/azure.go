package kinds

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	azurev1 "terraplane.io/terraplane/apis/azure/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
)

// azurermProviderVersion is the hashicorp/azurerm version constraint of the Azure kinds
// (4.9 added storage_account_id to containers). The provider cannot run where the tests
// do, so they run the modules on a stand-in serving its 4.55.0 schema
// (test/standin-provider), and plan them with the real one only where a mirror holds it
// (make test-cloud-plan).
const azurermProviderVersion = "~> 4.9"

// resolveAzureProvider turns an azure.terraplane.io Provider into an azurerm provider
// block, with its client secret only in the environment. It hands out no connection details.
func resolveAzureProvider(ctx context.Context, c client.Client, mg resource.Managed) (*registry.ProviderConfig, error) {
	p := &azurev1.Provider{}
	if err := getProvider(ctx, c, mg, "azure.terraplane.io", p); err != nil {
		return nil, err
	}
	env, auth, err := azureCredentials(ctx, c, p)
	if err != nil {
		return nil, err
	}
	cfg := map[string]any{
		"features":        []any{map[string]any{}},
		"subscription_id": p.Spec.SubscriptionID,
		"tenant_id":       p.Spec.TenantID,
	}
	for k, v := range auth {
		cfg[k] = v
	}
	return &registry.ProviderConfig{
		Providers: []render.Provider{{Name: "azurerm", Source: "hashicorp/azurerm", Version: azurermProviderVersion, Config: cfg}},
		Env:       env,
		Inputs:    map[string]any{"location": p.Spec.Location},
	}, nil
}

// azureCredentials are the environment terraform authenticates with (a service
// principal's ARM_CLIENT_ID and ARM_CLIENT_SECRET, or the injected identity's
// variables) and the provider settings that pick the injected identity.
func azureCredentials(ctx context.Context, c client.Client, p *azurev1.Provider) (map[string]string, map[string]any, error) {
	if p.Spec.Credentials != nil && p.Spec.Credentials.Source == azurev1.CredentialsSourceInjectedIdentity {
		env, cfg := azureInjectedIdentity()
		return env, cfg, nil
	}
	if p.Spec.CredentialsSecretRef == nil {
		return nil, nil, resource.UserErrorf("CredentialsSecretNotSet", "Provider %s/%s has no credentialsSecretRef; name the Secret with keys %s and %s, or set credentials.source: InjectedIdentity", p.Namespace, p.Name, azurev1.CredentialsClientID, azurev1.CredentialsClientSecret)
	}
	creds, err := readSecret(ctx, c, p.Namespace, p.Spec.CredentialsSecretRef.Name, azurev1.CredentialsClientID, azurev1.CredentialsClientSecret)
	if err != nil {
		return nil, nil, err
	}
	env := map[string]string{
		"ARM_CLIENT_ID":     string(creds[azurev1.CredentialsClientID]),
		"ARM_CLIENT_SECRET": string(creds[azurev1.CredentialsClientSecret]),
	}
	return env, nil, nil
}
