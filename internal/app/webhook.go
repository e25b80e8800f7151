package app

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"terraplane.io/terraplane/controllers/policy"
	"terraplane.io/terraplane/internal/servingcert"
)

// DefaultWebhookPort is the port the admission webhook listens on unless told otherwise.
const DefaultWebhookPort = 9443

// WebhookOptions configure the admission webhook that refuses plan policies whose rules
// do not compile, with the CEL error.
type WebhookOptions struct {
	// Host is the address the webhook listens on; empty means every address.
	Host string
	// Port it listens on; 0 means DefaultWebhookPort.
	Port int
	// CertDir receives the serving certificate; empty means <WorkDir>/.webhook-certs.
	CertDir string
	// Secret keeps the CA and serving certificate, shared by the replicas.
	Secret types.NamespacedName
	// Configuration names the ValidatingWebhookConfiguration. With Service it must exist
	// (the chart installs it) and gets only its caBundle; with URL it is created.
	Configuration string
	// Service is the Service (port 443) through which the API server calls the webhook.
	Service types.NamespacedName
	// URL is https://host:port, where the API server calls the webhook directly when there
	// is no Service (terraplane dev, the tests).
	URL string
}

// MissingConfigurationError says that the ValidatingWebhookConfiguration a Service-based
// webhook patches is not installed.
type MissingConfigurationError struct {
	// Name of the configuration.
	Name string
}

// Error says what installs it.
func (e *MissingConfigurationError) Error() string {
	return fmt.Sprintf("ValidatingWebhookConfiguration %s is not installed (the chart's policyWebhook.enabled installs it)", e.Name)
}

// webhookServer is the manager's webhook server for opts; nil when there is no webhook.
func webhookServer(opts Options) webhook.Server {
	w := opts.PolicyWebhook
	if w == nil {
		return nil
	}
	return webhook.NewServer(webhook.Options{Host: w.Host, Port: webhookPort(w), CertDir: webhookCertDir(opts)})
}

// setupWebhook makes sure of the webhook's certificate and configuration, and registers
// the policy validator with the manager's webhook server.
func setupWebhook(ctx context.Context, mgr ctrl.Manager, cfg *rest.Config, opts Options) error {
	w := opts.PolicyWebhook
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return fmt.Errorf("webhook client: %w", err)
	}
	hosts, err := webhookHosts(w)
	if err != nil {
		return err
	}
	if w.URL != "" { // a local control plane (terraplane dev) may not have it yet
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.Secret.Namespace}}
		if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("policy webhook: create namespace %s: %w", w.Secret.Namespace, err)
		}
	}
	ca, err := servingcert.Ensure(ctx, c, servingcert.Request{Secret: w.Secret, Hosts: hosts, Dir: webhookCertDir(opts)})
	if err != nil {
		return fmt.Errorf("policy webhook: %w", err)
	}
	if err := registerWebhook(ctx, c, w, ca); err != nil {
		return err
	}
	server := mgr.GetWebhookServer()
	server.Register(policy.WebhookPath, &webhook.Admission{Handler: policy.Validator{}})
	return mgr.AddReadyzCheck("webhook", server.StartedChecker())
}

// registerWebhook points the configuration at the webhook, trusting ca: with a URL it
// creates or updates the whole configuration; with a Service it sets the caBundle of the
// configuration the chart installed.
func registerWebhook(ctx context.Context, c client.Client, w *WebhookOptions, ca []byte) error {
	want := policy.WebhookConfiguration(w.Configuration, webhookClientConfig(w, ca))
	cur := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	err := c.Get(ctx, client.ObjectKey{Name: w.Configuration}, cur)
	switch {
	case apierrors.IsNotFound(err) && w.URL != "":
		if err := c.Create(ctx, want); err != nil {
			return fmt.Errorf("create ValidatingWebhookConfiguration %s: %w", w.Configuration, err)
		}
		return nil
	case apierrors.IsNotFound(err):
		return &MissingConfigurationError{Name: w.Configuration}
	case err != nil:
		return fmt.Errorf("read ValidatingWebhookConfiguration %s: %w", w.Configuration, err)
	}
	patched := cur.DeepCopy()
	if w.URL != "" {
		patched.Webhooks = want.Webhooks
	}
	for i := range patched.Webhooks {
		if patched.Webhooks[i].Name == policy.WebhookName {
			patched.Webhooks[i].ClientConfig.CABundle = ca
		}
	}
	if err := c.Patch(ctx, patched, client.MergeFrom(cur)); err != nil {
		return fmt.Errorf("set the caBundle of ValidatingWebhookConfiguration %s: %w", w.Configuration, err)
	}
	return nil
}

// webhookClientConfig is how the API server reaches the webhook.
func webhookClientConfig(w *WebhookOptions, ca []byte) admissionregistrationv1.WebhookClientConfig {
	if w.URL != "" {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(w.URL + policy.WebhookPath), CABundle: ca}
	}
	return admissionregistrationv1.WebhookClientConfig{CABundle: ca, Service: &admissionregistrationv1.ServiceReference{
		Namespace: w.Service.Namespace, Name: w.Service.Name, Path: ptr.To(policy.WebhookPath), Port: ptr.To[int32](443)}}
}

// webhookHosts are the names the serving certificate serves: the Service's, or the URL's
// host.
func webhookHosts(w *WebhookOptions) ([]string, error) {
	if w.URL == "" {
		if w.Service.Name == "" || w.Service.Namespace == "" {
			return nil, fmt.Errorf("policy webhook: name its Service (namespace/name) or its URL")
		}
		svc := w.Service.Name + "." + w.Service.Namespace + ".svc"
		return []string{svc, svc + ".cluster.local"}, nil
	}
	u, err := url.Parse(w.URL)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" {
		return nil, fmt.Errorf("policy webhook: URL %q is not https://host:port", w.URL)
	}
	return []string{u.Hostname()}, nil
}

// webhookPort is the port the webhook listens on.
func webhookPort(w *WebhookOptions) int {
	if w.Port != 0 {
		return w.Port
	}
	return DefaultWebhookPort
}

// webhookCertDir is where the serving certificate is written.
func webhookCertDir(opts Options) string {
	if opts.PolicyWebhook.CertDir != "" {
		return opts.PolicyWebhook.CertDir
	}
	return filepath.Join(opts.WorkDir, ".webhook-certs")
}

// LocalWebhook is a webhook the API server calls directly on this machine's loopback
// address at port (terraplane dev, the tests), its certificate kept in secretNamespace.
func LocalWebhook(port int, secretNamespace string) *WebhookOptions {
	return &WebhookOptions{Host: "127.0.0.1", Port: port, URL: "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		Secret:        types.NamespacedName{Namespace: secretNamespace, Name: "terraplane-webhook-tls"},
		Configuration: "terraplane-plan-policies"}
}
