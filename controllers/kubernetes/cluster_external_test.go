package kubernetes

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// apiServer answers /version as a Kubernetes API server of version v1.31.2 does; it is
// all a Cluster asks of its cluster.
func apiServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"gitVersion": "v1.31.2"})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// credentials is the ProviderConfig's Secret, pointing at endpoint.
func credentials(endpoint string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: credName},
		Data: map[string][]byte{remote.KeyEndpoint: []byte(endpoint), remote.KeyToken: []byte("t0ken")}}
}

// newClusters is the Cluster Connector over a fake control cluster, reaching target
// clusters through a real client cache.
func newClusters(local ...client.Object) (*clusters, client.Client) {
	s := localScheme()
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(local...).WithStatusSubresource(&kubernetesv1.ProviderConfig{}).Build()
	targets := &Targets{Local: c, Cache: remote.NewCache(c, &rest.Config{Host: "https://self"}, s)}
	return &clusters{native{client: c, targets: targets, opts: Options{}.WithDefaults(), recorder: resource.RecorderFor(events.NewFakeRecorder(10))}}, c
}

// newCluster is Cluster team-a/prod of ProviderConfig target.
func newCluster() *kubernetesv1.Cluster {
	c := &kubernetesv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prod", UID: "cluster-uid"}}
	c.Spec.ProviderRef = &common.LocalReference{Name: pcName}
	c.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: "prod-conn"}
	return c
}

// TestClusterObserve: a Cluster is up to date whenever its cluster answers, and hands on
// its credentials with the endpoint.
func TestClusterObserve(t *testing.T) {
	srv := apiServer(t)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	type result struct {
		Reason      string
		Unreachable bool
		UpToDate    bool
		Details     map[string][]byte
		AtProvider  kubernetesv1.ClusterObservation
	}
	cases := map[string]struct {
		local []client.Object
		want  result
	}{
		"it answers": {
			local: []client.Object{providerConfig(), credentials(srv.URL)},
			want: result{UpToDate: true, Details: map[string][]byte{"endpoint": []byte(srv.URL), "token": []byte("t0ken")},
				AtProvider: kubernetesv1.ClusterObservation{Endpoint: srv.URL, Version: "v1.31.2"}},
		},
		"it does not answer": {
			local: []client.Object{providerConfig(), credentials(closed.URL)},
			want:  result{Reason: "error", Unreachable: true},
		},
		"no ProviderConfig":               {local: []client.Object{credentials(srv.URL)}, want: result{Reason: "ClusterNotFound"}},
		"no credentials":                  {local: []client.Object{providerConfig()}, want: result{Reason: "CredentialsNotFound"}},
		"credentials without an endpoint": {local: []client.Object{providerConfig(), credentials("")}, want: result{Reason: "InvalidCredentials"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, _ := newClusters(tc.local...)
			c := newCluster()
			var got result
			ext, err := r.Connect(context.Background(), c)
			if err == nil {
				obs, oerr := ext.Observe(context.Background(), c)
				got.UpToDate, got.Details, err = obs.UpToDate, obs.ConnectionDetails, oerr
			}
			got.Reason, got.AtProvider = reason(err), c.Status.AtProvider
			_, got.Unreachable = remote.AsUnreachable(err)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestClusterApplyAndDelete: a Cluster is never changed, and deleting it removes its own
// connection Secret alone.
func TestClusterApplyAndDelete(t *testing.T) {
	srv := apiServer(t)
	other := connectionSecret("prod-conn", "someone-else")
	for name, tc := range map[string]struct {
		secret *corev1.Secret
		left   bool
	}{"its own Secret goes": {connectionSecret("prod-conn", "cluster-uid"), false}, "another's Secret stays": {other, true}} {
		t.Run(name, func(t *testing.T) {
			r, c := newClusters(providerConfig(), credentials(srv.URL), tc.secret)
			ext, err := r.Connect(context.Background(), newCluster())
			if err != nil {
				t.Fatal(err)
			}
			if applied, err := ext.Apply(context.Background(), newCluster()); err != nil || applied.ConnectionDetails != nil {
				t.Errorf("Apply = %+v, %v; want nothing", applied, err)
			}
			if err := r.Delete(context.Background(), newCluster()); err != nil {
				t.Fatal(err)
			}
			err = c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "prod-conn"}, &corev1.Secret{})
			if (err == nil) != tc.left {
				t.Errorf("connection Secret left: %v, want %v", err == nil, tc.left)
			}
		})
	}
}

// TestClusterWatches: a ProviderConfig, or the Secret it reads, reaches the Clusters that
// name the ProviderConfig.
func TestClusterWatches(t *testing.T) {
	named := func(name, pc string) *kubernetesv1.Cluster {
		c := &kubernetesv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if pc != "" {
			c.Spec.ProviderRef = &common.LocalReference{Name: pc}
		}
		return c
	}
	elsewhere := named("elsewhere", pcName)
	elsewhere.Namespace = "team-b"
	r, _ := newClusters(providerConfig(), named("a", pcName), named("b", "other"), named("c", ""), elsewhere)
	want := []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: "a"}}}
	if diff := cmp.Diff(want, r.forProviderConfig(context.Background(), providerConfig())); diff != "" {
		t.Errorf("for the ProviderConfig (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, r.forCredentials(context.Background(), credentials(""))); diff != "" {
		t.Errorf("for its Secret (-want +got):\n%s", diff)
	}
	unused := credentials("")
	unused.Name = "unused"
	if got := r.forCredentials(context.Background(), unused); got != nil {
		t.Errorf("for a Secret no ProviderConfig reads: %v", got)
	}
}
