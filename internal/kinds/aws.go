package kinds

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
)

// awsProviderVersion is the hashicorp/aws version constraint of the AWS kinds: the major
// version the bundled modules are tested with (5.100.0); each module's committed
// dependency lock fixes the exact version.
const awsProviderVersion = "~> 5.100"

// resolveAWSProvider turns an aws.terraplane.io Provider into an aws provider block, with
// its credentials only in the environment.
func resolveAWSProvider(ctx context.Context, c client.Client, mg resource.Managed) (*registry.ProviderConfig, error) {
	p := &awsv1.Provider{}
	if err := getProvider(ctx, c, mg, "aws.terraplane.io", p); err != nil {
		return nil, err
	}
	env, connection, err := awsCredentials(ctx, c, p)
	if err != nil {
		return nil, err
	}
	cfg := map[string]any{
		"region":                      p.Spec.Region,
		"skip_credentials_validation": p.Spec.SkipCredentialsValidation,
		"skip_requesting_account_id":  p.Spec.SkipRequestingAccountID,
		"skip_metadata_api_check":     p.Spec.SkipMetadataAPICheck,
		"skip_region_validation":      p.Spec.SkipRegionValidation,
		"s3_use_path_style":           p.Spec.S3UsePathStyle,
	}
	endpoints := map[string]any{}
	for service, url := range p.Spec.Endpoints {
		endpoints[service] = string(url)
	}
	if p.Spec.Endpoint != "" {
		endpoints["s3"] = p.Spec.Endpoint
	}
	if len(endpoints) > 0 {
		cfg["endpoints"] = []any{endpoints}
	}
	return &registry.ProviderConfig{
		Providers:  []render.Provider{{Name: "aws", Source: "hashicorp/aws", Version: awsProviderVersion, Config: cfg}},
		Env:        env,
		Inputs:     map[string]any{"endpoint_url": p.Spec.Endpoint},
		Connection: connection,
	}, nil
}

// awsCredentials are the environment terraform authenticates with, and the connection
// details the Provider offers: its keys, only with connectionCredentials: Provider.
func awsCredentials(ctx context.Context, c client.Client, p *awsv1.Provider) (map[string]string, map[string][]byte, error) {
	if p.Spec.Credentials != nil && p.Spec.Credentials.Source == awsv1.CredentialsSourceInjectedIdentity {
		env, err := awsInjectedIdentity(p.Namespace+"/"+p.Name, !p.Spec.SkipMetadataAPICheck)
		return env, nil, err
	}
	if p.Spec.CredentialsSecretRef == nil {
		return nil, nil, resource.UserErrorf("CredentialsSecretNotSet", "Provider %s/%s has no credentialsSecretRef; name the Secret with the keys, or set credentials.source: InjectedIdentity", p.Namespace, p.Name)
	}
	creds, err := readSecret(ctx, c, p.Namespace, p.Spec.CredentialsSecretRef.Name, awsv1.CredentialsAccessKeyID, awsv1.CredentialsSecretAccessKey)
	if err != nil {
		return nil, nil, err
	}
	env := map[string]string{
		"AWS_ACCESS_KEY_ID":     string(creds[awsv1.CredentialsAccessKeyID]),
		"AWS_SECRET_ACCESS_KEY": string(creds[awsv1.CredentialsSecretAccessKey]),
	}
	if tok := creds[awsv1.CredentialsSessionToken]; len(tok) > 0 {
		env["AWS_SESSION_TOKEN"] = string(tok)
	}
	if p.Spec.ConnectionCredentials != awsv1.ConnectionCredentialsProvider {
		return env, nil, nil
	}
	connection := map[string][]byte{
		awsv1.CredentialsAccessKeyID:     creds[awsv1.CredentialsAccessKeyID],
		awsv1.CredentialsSecretAccessKey: creds[awsv1.CredentialsSecretAccessKey],
	}
	return env, connection, nil
}

// readSecret reads a Secret and checks that it holds keys.
func readSecret(ctx context.Context, c client.Client, namespace, name string, keys ...string) (map[string][]byte, error) {
	s := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, resource.UserErrorf("CredentialsSecretNotFound", "credentials Secret %s/%s does not exist; create it with keys %v", namespace, name, keys)
		}
		return nil, fmt.Errorf("get credentials secret: %w", err)
	}
	for _, k := range keys {
		if len(s.Data[k]) == 0 {
			return nil, resource.UserErrorf("CredentialsSecretIncomplete", "credentials Secret %s/%s has no key %q", namespace, name, k)
		}
	}
	return s.Data, nil
}
