package registry_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// TestRequestValue: a class-mapped value comes from the chosen cluster's labels or from
// a dotted path in the claim; a path to nothing, to null or through a scalar has none.
func TestRequestValue(t *testing.T) {
	claim := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"team": "blue"}}}
	claim.Spec.Versioning = true
	claim.Spec.Tags = map[string]string{"env": "prod"}
	claim.Spec.ClassRef = &common.LocalReference{Name: "fast"}
	req := registry.Request{Claim: claim, ClusterLabels: map[string]string{"region": "eu-west-1"}}
	cases := map[string]struct {
		path, label string
		want        any
		found       bool
	}{
		"cluster label":         {"", "region", "eu-west-1", true},
		"missing cluster label": {"spec.versioning", "zone", "", false}, // the label wins over the path
		"a bool":                {"spec.versioning", "", true, true},
		"a map":                 {"spec.tags", "", map[string]any{"env": "prod"}, true},
		"a map entry":           {"spec.tags.env", "", "prod", true},
		"metadata":              {"metadata.labels.team", "", "blue", true},
		"a nested reference":    {"spec.classRef.name", "", "fast", true},
		"a missing field":       {"spec.nothing", "", nil, false},
		"through a scalar":      {"spec.versioning.deeper", "", nil, false},
		"an unset optional":     {"spec.resourceRef", "", nil, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, found, err := req.Value(tc.path, tc.label)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" || found != tc.found {
				t.Errorf("found = %v, want %v; value (-want +got):\n%s", found, tc.found, diff)
			}
		})
	}
}

// TestLookups: a kind is found by its GVK and by its class; a kind without a class is
// bound statically only and has no class constructor; native kinds are not Terraform's.
func TestLookups(t *testing.T) {
	r := registry.New(scheme(t))
	r.AddManaged(registry.ManagedKind{GVK: awsstoragev1.S3BucketGroupVersionKind, ClassGVK: awsstoragev1.S3BucketClassGroupVersionKind})
	r.AddManaged(registry.ManagedKind{GVK: awsstoragev1.S3BucketGroupVersionKind,
		New: func() resource.Managed { return &awsstoragev1.S3Bucket{} }})
	if k, ok := r.ManagedForClass(awsstoragev1.S3BucketClassGroupVersionKind); !ok || k.GVK != awsstoragev1.S3BucketGroupVersionKind {
		t.Errorf("ManagedForClass = %+v, %v", k, ok)
	}
	if _, ok := r.ManagedForClass(storagev1.GroupVersion.WithKind("BucketClass")); ok {
		t.Error("a portable class is no managed kind's class")
	}
	k, ok := r.Managed(awsstoragev1.S3BucketGroupVersionKind)
	if !ok || k.Terraform != nil || k.NewClass != nil {
		t.Errorf("re-registered without a class: %+v, %v; want the later registration, with no class constructor", k, ok)
	}
	if n := len(r.TerraformKinds()); n != 0 {
		t.Errorf("TerraformKinds = %d kinds, want none (the one kind is native)", n)
	}
	if n := len(r.ManagedKinds()); n != 1 {
		t.Errorf("ManagedKinds = %d kinds, want 1", n)
	}
	if _, ok := r.Managed(bucketGVK); ok {
		t.Error("a claim kind is not a managed kind")
	}
	if _, ok := r.Claim(bucketGVK); ok {
		t.Error("no claim kind was added")
	}
	if gvk, err := r.GVKFor(&awsstoragev1.S3Bucket{}); err != nil || gvk != awsstoragev1.S3BucketGroupVersionKind {
		t.Errorf("GVKFor(S3Bucket) = %v, %v", gvk, err)
	}
	if _, err := r.GVKFor(&corev1.Secret{}); err == nil {
		t.Error("GVKFor of a type missing from the scheme: want an error")
	}
}

// TestAddClaimKeepsCallerMap: registering copies the configurators, so later Meets never
// write into the caller's map, and a statically bound kind stays nil.
func TestAddClaimKeepsCallerMap(t *testing.T) {
	r := registry.New(scheme(t))
	staticGVK := schema.GroupVersionKind{Group: "example.io", Version: "v1", Kind: "Static"}
	mine := map[schema.GroupVersionKind]registry.Configurator{staticGVK: nil}
	ck := bucketClaim()
	ck.Configurators = mine
	r.AddClaim(ck)
	r.AddManaged(registry.ManagedKind{GVK: awsstoragev1.S3BucketGroupVersionKind,
		Meets: map[schema.GroupVersionKind]registry.Configurator{bucketGVK: func(registry.Request, resource.Managed) error { return nil }}})
	if len(mine) != 1 {
		t.Errorf("the caller's map was changed: %v", mine)
	}
	got, ok := r.Claim(bucketGVK)
	if !ok || len(got.Configurators) != 2 {
		t.Fatalf("Claim = %+v, %v; want two configurators", got, ok)
	}
	if c, has := got.Configurators[staticGVK]; !has || c != nil {
		t.Error("a statically bound kind must stay mapped to nil")
	}
}

// TestWrongTypePanics: a kind whose Go type lacks the methods of its role is refused,
// naming the kind.
func TestWrongTypePanics(t *testing.T) {
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "Bucket") || !strings.Contains(msg, "lacks methods") {
			t.Errorf("panic %q, want one naming Bucket and its missing methods", msg)
		}
	}()
	registry.New(scheme(t)).AddManaged(registry.ManagedKind{GVK: bucketGVK}) // a claim is no managed resource
}
