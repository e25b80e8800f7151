package main

import (
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/types"

	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/kref"
)

// webhookFlags are `terraplane controller`'s flags of the plan policies' admission webhook.
type webhookFlags struct {
	enabled       bool
	port          int
	certDir       string
	secret        string
	configuration string
	service       string
	url           string
}

// bind binds the flags.
func (f *webhookFlags) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&f.enabled, "policy-webhook", false, "serve the admission webhook that refuses PlanPolicies and NamespacedPlanPolicies whose rules do not compile, with the CEL error (needs --webhook-service or --webhook-url)")
	fs.IntVar(&f.port, "webhook-port", app.DefaultWebhookPort, "port the admission webhook listens on")
	fs.StringVar(&f.certDir, "webhook-cert-dir", "", "directory the webhook's serving certificate is written to (default <workdir>/.webhook-certs)")
	fs.StringVar(&f.secret, "webhook-secret", "terraplane-system/terraplane-webhook-tls", "namespace/name of the Secret keeping the webhook's self-signed CA and serving certificate, shared by the replicas")
	fs.StringVar(&f.configuration, "webhook-configuration", "terraplane-plan-policies", "the ValidatingWebhookConfiguration: with --webhook-service, installed by the chart, and given its caBundle; with --webhook-url, created")
	fs.StringVar(&f.service, "webhook-service", "", "namespace/name of the Service (port 443) through which the API server calls the webhook")
	fs.StringVar(&f.url, "webhook-url", "", "https://host:port where the API server calls the webhook directly, when there is no Service (a controller outside the cluster)")
}

// options are the webhook's options; nil without --policy-webhook.
func (f *webhookFlags) options() (*app.WebhookOptions, error) {
	if !f.enabled {
		return nil, nil
	}
	secret, err := namespacedName("--webhook-secret", f.secret)
	if err != nil {
		return nil, err
	}
	o := &app.WebhookOptions{Port: f.port, CertDir: f.certDir, Secret: secret, Configuration: f.configuration, URL: f.url}
	switch {
	case f.service != "" && f.url != "":
		return nil, kref.Usagef("--webhook-service and --webhook-url exclude each other")
	case f.service != "":
		if o.Service, err = namespacedName("--webhook-service", f.service); err != nil {
			return nil, err
		}
	case f.url == "":
		return nil, kref.Usagef("--policy-webhook needs --webhook-service or --webhook-url")
	}
	return o, nil
}

// namespacedName reads a flag's namespace/name.
func namespacedName(flag, v string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(v, "/")
	if !ok || ns == "" || name == "" {
		return types.NamespacedName{}, kref.Usagef("%s %q is not namespace/name", flag, v)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}
