package dynclaim

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

var (
	claimGVK = schema.GroupVersionKind{Group: "platform.example.org", Version: "v1alpha1", Kind: "Network"}
	classGVK = schema.GroupVersionKind{Group: "platform.example.org", Version: "v1alpha1", Kind: "NetworkClass"}
	key      = client.ObjectKey{Namespace: "team-a", Name: "net"}
)

// newClient is a Client over a fake API server that serves both defined kinds, the
// claim with a status subresource; objs are stored first.
func newClient(objs ...client.Object) (Client, client.Client) {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(claimGVK, meta.RESTScopeNamespace)
	mapper.Add(classGVK, meta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	c := fake.NewClientBuilder().WithScheme(s).WithRESTMapper(mapper).WithObjects(objs...).
		WithStatusSubresource(empty(claimGVK)).Build()
	return Client{Client: c}, c
}

// stored is a claim as the API server holds it.
func stored(spec map[string]any, status map[string]any) *unstructured.Unstructured {
	u := empty(claimGVK)
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	u.Object["spec"] = spec
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

// raw reads the claim's spec and status, when not empty, as the API server holds them.
func raw(t *testing.T, c client.Client) map[string]any {
	t.Helper()
	u := empty(claimGVK)
	if err := c.Get(context.Background(), key, u); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{"spec": u.Object["spec"]}
	if st, _ := u.Object["status"].(map[string]any); len(st) > 0 {
		out["status"] = st
	}
	return out
}

func claim(params string) *Claim {
	c := NewClaim(claimGVK)
	c.Namespace, c.Name = key.Namespace, key.Name
	c.Spec.ClassRef = &common.LocalReference{Name: "fast"}
	if params != "" {
		c.Spec.Parameters = &apiextensionsv1.JSON{Raw: []byte(params)}
	}
	return c
}

// TestWrites: each write sends the typed claim as an object of its kind, and what the
// server answers (its resourceVersion) comes back into the typed claim.
func TestWrites(t *testing.T) {
	ctx := context.Background()
	before := stored(map[string]any{"classRef": map[string]any{"name": "fast"}, "parameters": map[string]any{"cidr": "10.0.0.0/16"}}, nil)
	cases := map[string]struct {
		have  []client.Object
		write func(Client, *Claim) error
		want  map[string]any
	}{
		"create": {
			write: func(c Client, cl *Claim) error { return c.Create(ctx, cl) },
			want:  map[string]any{"spec": map[string]any{"classRef": map[string]any{"name": "fast"}, "parameters": map[string]any{"cidr": "10.1.0.0/16"}}},
		},
		"update": {
			have: []client.Object{before},
			write: func(c Client, cl *Claim) error {
				if err := c.Get(ctx, key, cl); err != nil {
					return err
				}
				cl.Spec.Parameters = &apiextensionsv1.JSON{Raw: []byte(`{"cidr": "10.1.0.0/16"}`)}
				return c.Update(ctx, cl)
			},
			want: map[string]any{"spec": map[string]any{"classRef": map[string]any{"name": "fast"}, "parameters": map[string]any{"cidr": "10.1.0.0/16"}}},
		},
		"patch": {
			have: []client.Object{before},
			write: func(c Client, cl *Claim) error {
				return c.Patch(ctx, cl, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"parameters":{"cidr":"10.1.0.0/16"}}}`)))
			},
			want: map[string]any{"spec": map[string]any{"classRef": map[string]any{"name": "fast"}, "parameters": map[string]any{"cidr": "10.1.0.0/16"}}},
		},
		"status update writes the status alone": {
			have: []client.Object{before},
			write: func(c Client, cl *Claim) error {
				if err := c.Get(ctx, key, cl); err != nil {
					return err
				}
				cl.Spec.Parameters = nil
				cl.Status.BindingPhase = common.BindingPhaseBound
				return c.Status().Update(ctx, cl)
			},
			want: map[string]any{"spec": before.Object["spec"], "status": map[string]any{"bindingPhase": "Bound"}},
		},
		"status patch": {
			have: []client.Object{before},
			write: func(c Client, cl *Claim) error {
				return c.Status().Patch(ctx, cl, client.RawPatch("application/merge-patch+json", []byte(`{"status":{"observedGeneration":3}}`)))
			},
			want: map[string]any{"spec": before.Object["spec"], "status": map[string]any{"observedGeneration": int64(3)}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, server := newClient(tc.have...)
			cl := claim(`{"cidr": "10.1.0.0/16"}`)
			if err := tc.write(c, cl); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, raw(t, server)); diff != "" {
				t.Errorf("stored claim (-want +got):\n%s", diff)
			}
			if cl.ResourceVersion == "" || cl.GroupVersionKind() != claimGVK {
				t.Errorf("the claim after the write has resourceVersion %q and kind %v: the server's answer was not read back", cl.ResourceVersion, cl.GroupVersionKind())
			}
		})
	}
}

// TestGet: a claim is read from the object of its kind, replacing everything it held.
func TestGet(t *testing.T) {
	c, _ := newClient(stored(map[string]any{"classRef": map[string]any{"name": "fast"}, "parameters": map[string]any{"size": int64(3)}},
		map[string]any{"bindingPhase": "Bound"}))
	cl := NewClaim(claimGVK)
	cl.Labels = map[string]string{"left": "over"}
	cl.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "stale"}
	if err := c.Get(context.Background(), key, cl); err != nil {
		t.Fatal(err)
	}
	params, err := cl.Parameters()
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Kind         schema.GroupVersionKind
		Labels       map[string]string
		Spec         common.ClaimSpec
		Params       map[string]any
		BindingPhase common.BindingPhase
	}
	want := view{Kind: claimGVK, Spec: common.ClaimSpec{ClassRef: &common.LocalReference{Name: "fast"}},
		Params: map[string]any{"size": float64(3)}, BindingPhase: common.BindingPhaseBound}
	got := view{cl.GroupVersionKind(), cl.Labels, *cl.GetClaimSpec(), params, cl.GetClaimStatus().BindingPhase}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "none"}, NewClaim(claimGVK)); !apierrors.IsNotFound(err) {
		t.Errorf("Get of a missing claim: %v, want NotFound", err)
	}
}

// TestGetReadsTheCache: with a cache, claims and classes are read from it and other
// objects from the client, as a controller-runtime client reads compiled-in kinds from
// its informers.
func TestGetReadsTheCache(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(stored(map[string]any{"classRef": map[string]any{"name": "in-the-api-server"}}, nil))
	cache, _ := newClient(stored(map[string]any{"classRef": map[string]any{"name": "in-the-cache"}}, nil))
	c.Cache = cache.Client
	cl := NewClaim(claimGVK)
	if err := c.Get(ctx, key, cl); err != nil {
		t.Fatal(err)
	}
	if got := cl.GetClaimSpec().ClassRef.Name; got != "in-the-cache" {
		t.Errorf("the claim was read with class %q, want the cache's %q", got, "in-the-cache")
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cm"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err != nil {
		t.Errorf("a ConfigMap was not read from the client: %v", err)
	}
}

func TestDelete(t *testing.T) {
	c, server := newClient(stored(map[string]any{}, nil))
	if err := c.Delete(context.Background(), claim("")); err != nil {
		t.Fatal(err)
	}
	if err := server.Get(context.Background(), key, empty(claimGVK)); !apierrors.IsNotFound(err) {
		t.Errorf("the claim is still there: %v", err)
	}
}

// TestOtherObjectsPassThrough: compiled-in kinds are read and written as they are.
func TestOtherObjectsPassThrough(t *testing.T) {
	ctx := context.Background()
	c, server := newClient()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "cm"}, Data: map[string]string{"a": "1"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["a"] = "2"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil || got.Data["a"] != "2" {
		t.Errorf("ConfigMap read back: %v, %v", got.Data, err)
	}
	if err := c.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := server.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap still there: %v", err)
	}
}
