package backendproxy

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestNarrow: a LIST of Secrets that selects one workspace's state by its labels reads
// that Secret by name; every other request goes on as it came.
func TestNarrow(t *testing.T) {
	const state = "tfstate=true,tfstateSecretSuffix=abc,tfstateWorkspace=default"
	cases := []struct {
		name, path, query string
		want              string // the field selector added; "" for none
	}{
		{name: "a state read", path: "/api/v1/namespaces/ns/secrets", query: "labelSelector=" + url.QueryEscape(state), want: "metadata.name=tfstate-default-abc"},
		{name: "a state read without the tfstate label", path: "/api/v1/namespaces/ns/secrets", query: "labelSelector=" + url.QueryEscape("tfstateSecretSuffix=abc,tfstateWorkspace=default"), want: "metadata.name=tfstate-default-abc"},
		{name: "a state read with a set of one", path: "/api/v1/namespaces/ns/secrets", query: "labelSelector=" + url.QueryEscape("tfstateSecretSuffix in (abc),tfstateWorkspace=default"), want: "metadata.name=tfstate-default-abc"},
		{name: "the workspaces' list", path: "/api/v1/namespaces/ns/secrets", query: "labelSelector=tfstate%3Dtrue"},
		{name: "not the tfstate label", path: "/api/v1/namespaces/ns/secrets", query: "labelSelector=" + url.QueryEscape("tfstate=false,tfstateSecretSuffix=abc,tfstateWorkspace=default")},
		{name: "two suffixes", path: "/api/v1/namespaces/ns/secrets", query: "labelSelector=" + url.QueryEscape("tfstateSecretSuffix in (a,b),tfstateWorkspace=default")},
		{name: "a suffix it must not have", path: "/api/v1/namespaces/ns/secrets", query: "labelSelector=" + url.QueryEscape("tfstateSecretSuffix!=abc,tfstateWorkspace=default")},
		{name: "a field selector already", path: "/api/v1/namespaces/ns/secrets", query: "labelSelector=" + url.QueryEscape(state) + "&fieldSelector=type%3DOpaque"},
		{name: "a watch", path: "/api/v1/namespaces/ns/secrets", query: "watch=true&labelSelector=" + url.QueryEscape(state)},
		{name: "Leases", path: "/apis/coordination.k8s.io/v1/namespaces/ns/leases", query: "labelSelector=" + url.QueryEscape(state)},
		{name: "a Secret by name", path: "/api/v1/namespaces/ns/secrets/tfstate-default-abc", query: "labelSelector=" + url.QueryEscape(state)},
		{name: "an unparsable selector", path: "/api/v1/namespaces/ns/secrets", query: "labelSelector=%3D%3D%3D"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got := narrow(tc.path, q)
			if got.Get("fieldSelector") != tc.want && (tc.want != "" || got.Get("fieldSelector") != q.Get("fieldSelector")) {
				t.Errorf("field selector %q, want %q", got.Get("fieldSelector"), tc.want)
			}
			if got.Get("labelSelector") != q.Get("labelSelector") || got.Get("watch") != q.Get("watch") {
				t.Errorf("the rest of the query changed: %v from %v", got, q)
			}
		})
	}
}

// TestProxy: only a holder of the kubeconfig's token gets through, the upstream never
// sees that token but the identity the proxy was started with, and a state read arrives
// narrowed; a proxy that stops removes its kubeconfig and no other's.
func TestProxy(t *testing.T) {
	var mu sync.Mutex
	var seen []*http.Request
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(r.Context()))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"kind":"SecretList","apiVersion":"v1","items":[]}`)
	}))
	defer upstream.Close()
	dir := t.TempDir()
	p, err := Start(&rest.Config{Host: upstream.URL, BearerToken: "the-identity"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := p.Kubeconfig()
	if fi, err := os.Stat(kubeconfig); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig %v, %v; want mode 0600", fi, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}}
	get := func(token, path string) int {
		req, _ := http.NewRequest(http.MethodGet, cfg.Host+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	read := "/api/v1/namespaces/ns/secrets?labelSelector=" + url.QueryEscape("tfstate=true,tfstateSecretSuffix=abc,tfstateWorkspace=default")
	for _, token := range []string{"", "the-identity", cfg.BearerToken + "x"} {
		if code := get(token, read); code != http.StatusUnauthorized {
			t.Errorf("token %q: status %d, want 401", token, code)
		}
	}
	if code := get(cfg.BearerToken, read); code != http.StatusOK {
		t.Fatalf("the kubeconfig's token: status %d", code)
	}
	if len(seen) != 1 {
		t.Fatalf("the API server got %d requests, want 1", len(seen))
	}
	if got := seen[0].Header.Get("Authorization"); got != "Bearer the-identity" {
		t.Errorf("the API server saw Authorization %q, want the proxy's own identity", got)
	}
	if got := seen[0].URL.Query().Get("fieldSelector"); got != "metadata.name=tfstate-default-abc" {
		t.Errorf("the API server saw field selector %q", got)
	}
	next, err := Start(&rest.Config{Host: upstream.URL}, dir) // a proxy after it, on the same directory
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kubeconfig); !os.IsNotExist(err) {
		t.Errorf("the kubeconfig outlived the proxy: %v", err)
	}
	if _, err := os.Stat(next.Kubeconfig()); err != nil {
		t.Errorf("a proxy that stopped removed the next one's kubeconfig: %v", err)
	}
}
