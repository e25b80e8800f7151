package main

import (
	"fmt"
	"io"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
)

// providerPlan is what a class needs for the providers of its module: the ProviderConfigs
// it names, and stubs of those that do not exist yet.
type providerPlan struct {
	// reqs are the providers the module (and its local modules) require.
	reqs []module.ProviderRequirement
	// refs name the ProviderConfigs, for providerConfigRefs.
	refs []common.LocalReference
	// stubs are ProviderConfigs to fill in (config and credentials) and apply.
	stubs []*terraformv1.ProviderConfig
	// configs maps a provider's local name to its ProviderConfig's name.
	configs map[string]string
}

// planProviders names a ProviderConfig for every provider the module requires that takes
// configuration: the one --provider-config names (LOCAL=NAME, which exists already), or a
// stub named as the module's local name for the provider.
func planProviders(m *module.Module, namespace string, named []string) (*providerPlan, error) {
	given := map[string]string{}
	for _, kv := range named {
		local, name, ok := strings.Cut(kv, "=")
		if !ok || local == "" || name == "" {
			return nil, fmt.Errorf("--provider-config %q: write LOCAL=NAME, e.g. aws=aws-production", kv)
		}
		given[local] = name
	}
	reqs, err := m.AllRequiredProviders()
	if err != nil {
		return nil, err
	}
	p := &providerPlan{reqs: reqs, configs: map[string]string{}}
	for _, r := range reqs {
		short := strings.TrimPrefix(r.Source, module.DefaultRegistry+"/")
		if !module.NeedsConfiguration(r.Source) {
			continue
		}
		if name, ok := given[r.Name]; ok {
			p.refs = append(p.refs, common.LocalReference{Name: name})
			p.configs[r.Name] = name
			delete(given, r.Name)
			continue
		}
		p.refs = append(p.refs, common.LocalReference{Name: r.Name})
		p.configs[r.Name] = r.Name
		p.stubs = append(p.stubs, &terraformv1.ProviderConfig{
			TypeMeta:   metav1.TypeMeta{APIVersion: terraformv1.GroupVersion.String(), Kind: "ProviderConfig"},
			ObjectMeta: metav1.ObjectMeta{Name: r.Name, Namespace: namespace, Annotations: map[string]string{terraformv1.StubAnnotation: "true"}},
			Spec: terraformv1.ProviderConfigSpec{Source: short, Version: r.Constraints,
				Config: &apiextensionsv1.JSON{Raw: []byte("{}")}},
		})
	}
	for local := range given {
		return nil, fmt.Errorf("--provider-config %s=...: the module requires no provider %q that takes configuration", local, local)
	}
	return p, nil
}

// providerHints are comments that say what a stub of a well-known provider needs.
var providerHints = map[string]string{
	"hashicorp/aws": `# spec.config:      {region: us-east-1}   (and endpoints: [{s3: URL, sts: URL}] for an S3-compatible store or emulator)
# spec.credentials: [{env: AWS_ACCESS_KEY_ID, secretKeyRef: {name: aws-credentials, key: access-key-id}},
#                    {env: AWS_SECRET_ACCESS_KEY, secretKeyRef: {name: aws-credentials, key: secret-access-key}}]
#   or spec.injectedIdentity: [AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE] for IRSA`,
	"hashicorp/google": `# spec.config:      {project: my-project, region: europe-west1}
# spec.credentials: [{env: GOOGLE_CREDENTIALS, secretKeyRef: {name: gcp-credentials, key: credentials.json}}]`,
	"hashicorp/azurerm": `# spec.config:      {features: [{}], subscription_id: ...}
# spec.credentials: [{env: ARM_CLIENT_ID, ...}, {env: ARM_CLIENT_SECRET, ...}, {env: ARM_TENANT_ID, ...}]`,
}

// writeProviderHeader says which providers the module needs and what to fill in.
func (p *providerPlan) writeHeader(w io.Writer) {
	if len(p.reqs) == 0 {
		fmt.Fprintln(w, "# The module requires no provider.")
		return
	}
	fmt.Fprintln(w, "# The module requires these providers:")
	for _, r := range p.reqs {
		c := r.Constraints
		if c == "" {
			c = "any version"
		}
		fmt.Fprintf(w, "#   %s (%s, as %q)\n", strings.TrimPrefix(r.Source, module.DefaultRegistry+"/"), c, r.Name)
	}
	if len(p.stubs) > 0 {
		fmt.Fprintln(w, "# Fill in each ProviderConfig ("+terraformv1.ProviderConfigResource+") below (config and credentials, in a Secret), or name an existing")
		fmt.Fprintln(w, "# one with --provider-config LOCAL=NAME; claims cannot be Ready before.")
	}
}

// stubHint is the comment above a stub.
func stubHint(pc *terraformv1.ProviderConfig) string {
	hint := "# config holds the provider block's attributes; credentials reach terraform as environment variables."
	if h, ok := providerHints[pc.Spec.Source]; ok {
		hint = h
	}
	return fmt.Sprintf("# %s for %s: fill it in, and remove the %s annotation; until then the class is not Ready.\n%s\n",
		terraformv1.ProviderConfigResource, pc.Spec.Source, terraformv1.StubAnnotation, hint)
}

// configFor names the ProviderConfig that configures the module's provider local.
func (p *providerPlan) configFor(local string) string {
	return p.configs[local]
}
