package kinds

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gcpv1 "terraplane.io/terraplane/apis/gcp/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
)

// googleProviderVersion is the hashicorp/google version constraint of the GCP kinds.
// The provider cannot run where the tests do, so they run the modules on a stand-in
// serving its 6.50.0 schema (test/standin-provider), and plan them with the real one only
// where a mirror holds it (make test-cloud-plan).
const googleProviderVersion = "~> 6.0"

// resolveGCPProvider turns a gcp.terraplane.io Provider into a google provider block, with
// its credentials only in the environment. It hands out no connection details.
func resolveGCPProvider(ctx context.Context, c client.Client, mg resource.Managed) (*registry.ProviderConfig, error) {
	p := &gcpv1.Provider{}
	if err := getProvider(ctx, c, mg, "gcp.terraplane.io", p); err != nil {
		return nil, err
	}
	env, err := gcpCredentials(ctx, c, p)
	if err != nil {
		return nil, err
	}
	cfg := map[string]any{"project": p.Spec.Project, "region": p.Spec.Region}
	return &registry.ProviderConfig{
		Providers: []render.Provider{{Name: "google", Source: "hashicorp/google", Version: googleProviderVersion, Config: cfg}},
		Env:       env,
		Inputs:    map[string]any{"project": p.Spec.Project, "region": p.Spec.Region},
	}, nil
}

// gcpCredentials are the environment terraform authenticates with: the service account
// key as GOOGLE_CREDENTIALS (the provider reads the key's JSON from it, so no file is
// written), or the injected identity's variables.
func gcpCredentials(ctx context.Context, c client.Client, p *gcpv1.Provider) (map[string]string, error) {
	if p.Spec.Credentials != nil && p.Spec.Credentials.Source == gcpv1.CredentialsSourceInjectedIdentity {
		env, _ := injectedIdentity(gcpIdentityEnv)
		return env, nil
	}
	if p.Spec.CredentialsSecretRef == nil {
		return nil, resource.UserErrorf("CredentialsSecretNotSet", "Provider %s/%s has no credentialsSecretRef; name the Secret with the service account key (key %s), or set credentials.source: InjectedIdentity", p.Namespace, p.Name, gcpv1.CredentialsKey)
	}
	creds, err := readSecret(ctx, c, p.Namespace, p.Spec.CredentialsSecretRef.Name, gcpv1.CredentialsKey)
	if err != nil {
		return nil, err
	}
	return map[string]string{"GOOGLE_CREDENTIALS": string(creds[gcpv1.CredentialsKey])}, nil
}
