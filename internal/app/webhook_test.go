package app

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"terraplane.io/terraplane/controllers/policy"
)

// TestWebhookHosts: the serving certificate is for the Service's DNS names, or for the
// URL's host; a webhook with neither, or with a URL that is not https://host:port, is
// refused saying what it wants.
func TestWebhookHosts(t *testing.T) {
	svc := types.NamespacedName{Namespace: "terraplane-system", Name: "terraplane-webhook"}
	for name, tc := range map[string]struct {
		w       WebhookOptions
		want    []string
		wantErr string
	}{
		"service": {w: WebhookOptions{Service: svc},
			want: []string{"terraplane-webhook.terraplane-system.svc", "terraplane-webhook.terraplane-system.svc.cluster.local"}},
		"URL":                   {w: WebhookOptions{URL: "https://127.0.0.1:9443"}, want: []string{"127.0.0.1"}},
		"URL by name":           {w: WebhookOptions{URL: "https://webhook.example:8443"}, want: []string{"webhook.example"}},
		"URL over IPv6":         {w: WebhookOptions{URL: "https://[::1]:9443"}, want: []string{"::1"}},
		"URL wins over Service": {w: WebhookOptions{URL: "https://10.0.0.1:9443", Service: svc}, want: []string{"10.0.0.1"}},
		"neither":               {wantErr: "name its Service"},
		"Service without a namespace": {w: WebhookOptions{Service: types.NamespacedName{Name: "terraplane-webhook"}},
			wantErr: "name its Service"},
		"plain http":       {w: WebhookOptions{URL: "http://127.0.0.1:9443"}, wantErr: "is not https://host:port"},
		"no host":          {w: WebhookOptions{URL: "https://:9443"}, wantErr: "is not https://host:port"},
		"not a URL at all": {w: WebhookOptions{URL: "https://%zz"}, wantErr: "is not https://host:port"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := webhookHosts(&tc.w)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("webhookHosts = %v, %v; want an error saying %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("hosts (-want +got):\n%s", d)
			}
		})
	}
}

// TestWebhookServing: the webhook listens on its port, 9443 unless told, and keeps its
// certificate in its own directory or under the work directory; no webhook, no server.
func TestWebhookServing(t *testing.T) {
	if s := webhookServer(Options{}); s != nil {
		t.Errorf("a webhook server without a webhook: %v", s)
	}
	if got := webhookPort(&WebhookOptions{}); got != DefaultWebhookPort {
		t.Errorf("default port %d", got)
	}
	if got := webhookPort(&WebhookOptions{Port: 10443}); got != 10443 {
		t.Errorf("port 10443 given, %d used", got)
	}
	if got := webhookCertDir(Options{WorkDir: "/work", PolicyWebhook: &WebhookOptions{}}); got != filepath.Join("/work", ".webhook-certs") {
		t.Errorf("default certificate directory %s", got)
	}
	if got := webhookCertDir(Options{WorkDir: "/work", PolicyWebhook: &WebhookOptions{CertDir: "/certs"}}); got != "/certs" {
		t.Errorf("certificate directory /certs given, %s used", got)
	}
	if s := webhookServer(Options{WorkDir: "/work", PolicyWebhook: &WebhookOptions{}}); s == nil {
		t.Error("no webhook server for a webhook")
	}
}

// TestLocalWebhook: the webhook of terraplane dev listens on loopback only, and the API
// server is told to call it there, at the policy path, trusting the given CA.
func TestLocalWebhook(t *testing.T) {
	w := LocalWebhook(19443, "terraplane-system")
	if w.Host != "127.0.0.1" || webhookPort(w) != 19443 || w.Secret.Namespace != "terraplane-system" || w.Configuration == "" {
		t.Errorf("LocalWebhook = %+v", w)
	}
	hosts, err := webhookHosts(w)
	if err != nil || !cmp.Equal(hosts, []string{"127.0.0.1"}) {
		t.Errorf("hosts %v, %v; want 127.0.0.1", hosts, err)
	}
	cc := webhookClientConfig(w, []byte("CA"))
	if cc.Service != nil || ptr.Deref(cc.URL, "") != "https://127.0.0.1:19443"+policy.WebhookPath || string(cc.CABundle) != "CA" {
		t.Errorf("client config %+v", cc)
	}
	svc := webhookClientConfig(&WebhookOptions{Service: types.NamespacedName{Namespace: "ns", Name: "wh"}}, []byte("CA"))
	want := &admissionregistrationv1.ServiceReference{Namespace: "ns", Name: "wh", Path: ptr.To(policy.WebhookPath), Port: ptr.To[int32](443)}
	if svc.URL != nil || !cmp.Equal(svc.Service, want) || string(svc.CABundle) != "CA" {
		t.Errorf("Service client config %+v", svc)
	}
}

func webhookScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := admissionregistrationv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRegisterWebhook: with a URL the configuration is created, or made whole again;
// with a Service only the caBundle of the policy webhook in the chart's configuration
// changes, and a configuration not installed is a MissingConfigurationError.
func TestRegisterWebhook(t *testing.T) {
	ctx := context.Background()
	local := LocalWebhook(19443, "terraplane-system")
	service := &WebhookOptions{Configuration: "terraplane-plan-policies", Service: types.NamespacedName{Namespace: "ns", Name: "wh"}}
	chart := func() *admissionregistrationv1.ValidatingWebhookConfiguration {
		c := policy.WebhookConfiguration("terraplane-plan-policies", webhookClientConfig(service, []byte("old CA")))
		c.Webhooks[0].FailurePolicy = ptr.To(admissionregistrationv1.Fail) // the chart's choice
		c.Webhooks = append(c.Webhooks, admissionregistrationv1.ValidatingWebhook{Name: "other.example.com",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: []byte("other CA")}})
		return c
	}
	get := func(t *testing.T, c client.Client) *admissionregistrationv1.ValidatingWebhookConfiguration {
		t.Helper()
		got := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: "terraplane-plan-policies"}, got); err != nil {
			t.Fatal(err)
		}
		return got
	}

	t.Run("URL, none yet", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(webhookScheme(t)).Build()
		if err := registerWebhook(ctx, c, local, []byte("CA")); err != nil {
			t.Fatal(err)
		}
		want := policy.WebhookConfiguration(local.Configuration, webhookClientConfig(local, []byte("CA")))
		if d := cmp.Diff(want.Webhooks, get(t, c).Webhooks); d != "" {
			t.Errorf("webhooks (-want +got):\n%s", d)
		}
	})
	t.Run("URL, changed by hand", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(webhookScheme(t)).WithObjects(chart()).Build()
		if err := registerWebhook(ctx, c, local, []byte("CA")); err != nil {
			t.Fatal(err)
		}
		want := policy.WebhookConfiguration(local.Configuration, webhookClientConfig(local, []byte("CA")))
		if d := cmp.Diff(want.Webhooks, get(t, c).Webhooks); d != "" {
			t.Errorf("webhooks (-want +got):\n%s", d)
		}
	})
	t.Run("Service", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(webhookScheme(t)).WithObjects(chart()).Build()
		if err := registerWebhook(ctx, c, service, []byte("new CA")); err != nil {
			t.Fatal(err)
		}
		want := chart()
		want.Webhooks[0].ClientConfig.CABundle = []byte("new CA")
		if d := cmp.Diff(want.Webhooks, get(t, c).Webhooks); d != "" {
			t.Errorf("webhooks (-want +got):\n%s", d)
		}
	})
	t.Run("Service, not installed", func(t *testing.T) {
		c := fake.NewClientBuilder().WithScheme(webhookScheme(t)).Build()
		err := registerWebhook(ctx, c, service, []byte("CA"))
		var missing *MissingConfigurationError
		if !errors.As(err, &missing) || missing.Name != "terraplane-plan-policies" || !strings.Contains(err.Error(), "policyWebhook.enabled") {
			t.Fatalf("registerWebhook = %v, want a MissingConfigurationError saying what installs it", err)
		}
		if err := c.Get(ctx, client.ObjectKey{Name: "terraplane-plan-policies"}, &admissionregistrationv1.ValidatingWebhookConfiguration{}); err == nil {
			t.Error("a Service-based webhook created the configuration the chart owns")
		}
	})
	t.Run("read refused", func(t *testing.T) {
		denied := errors.New("forbidden")
		c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(webhookScheme(t)).Build(), interceptor.Funcs{
			Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return denied
			},
		})
		err := registerWebhook(ctx, c, local, []byte("CA"))
		if !errors.Is(err, denied) || !strings.Contains(err.Error(), "read ValidatingWebhookConfiguration terraplane-plan-policies") {
			t.Errorf("registerWebhook = %v, want the read's error, naming the configuration", err)
		}
	})
}
