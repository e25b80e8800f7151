package registry_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := awsstoragev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := storagev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

var bucketGVK = storagev1.GroupVersion.WithKind("Bucket")

func bucketClaim() registry.ClaimKind {
	return registry.ClaimKind{GVK: bucketGVK, ClassGVK: storagev1.GroupVersion.WithKind("BucketClass")}
}

// TestConstructorsFromScheme checks that a registration naming only its kinds gets
// constructors of the right Go types.
func TestConstructorsFromScheme(t *testing.T) {
	r := registry.New(scheme(t))
	r.AddManaged(registry.ManagedKind{GVK: awsstoragev1.S3BucketGroupVersionKind, ClassGVK: awsstoragev1.S3BucketClassGroupVersionKind})
	r.AddClaim(bucketClaim())
	mk, _ := r.Managed(awsstoragev1.S3BucketGroupVersionKind)
	if _, ok := mk.New().(*awsstoragev1.S3Bucket); !ok {
		t.Errorf("New() = %T, want *S3Bucket", mk.New())
	}
	if _, ok := mk.NewList().(*awsstoragev1.S3BucketList); !ok {
		t.Errorf("NewList() = %T, want *S3BucketList", mk.NewList())
	}
	if _, ok := mk.NewClass().(*awsstoragev1.S3BucketClass); !ok {
		t.Errorf("NewClass() = %T, want *S3BucketClass", mk.NewClass())
	}
	if mk.New() == mk.New() {
		t.Error("New() returned the same object twice")
	}
	ck := r.ClaimKinds()[0]
	if _, ok := ck.New().(*storagev1.Bucket); !ok {
		t.Errorf("claim New() = %T, want *Bucket", ck.New())
	}
	if _, ok := ck.NewList().(*storagev1.BucketList); !ok {
		t.Errorf("NewList() = %T, want *BucketList", ck.NewList())
	}
	if _, ok := ck.NewClassList().(*storagev1.BucketClassList); !ok {
		t.Errorf("NewClassList() = %T, want *BucketClassList", ck.NewClassList())
	}
}

// TestMeets checks that a managed kind's Meets reach the claim kind's Configurators
// whichever is registered first.
func TestMeets(t *testing.T) {
	configure := func(registry.Request, resource.Managed) error { return nil }
	managed := registry.ManagedKind{GVK: awsstoragev1.S3BucketGroupVersionKind, ClassGVK: awsstoragev1.S3BucketClassGroupVersionKind,
		Meets: map[schema.GroupVersionKind]registry.Configurator{bucketGVK: configure}}
	for name, managedFirst := range map[string]bool{"managed first": true, "claim first": false} {
		t.Run(name, func(t *testing.T) {
			r := registry.New(scheme(t))
			if managedFirst {
				r.AddManaged(managed)
				r.AddClaim(bucketClaim())
			} else {
				r.AddClaim(bucketClaim())
				r.AddManaged(managed)
			}
			if r.ClaimKinds()[0].Configurators[awsstoragev1.S3BucketGroupVersionKind] == nil {
				t.Error("Bucket claims have no configurator for S3Bucket")
			}
		})
	}
}

// TestUnknownKindPanics checks that a registration of a kind missing from the scheme
// fails at once, naming the kind.
func TestUnknownKindPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("AddManaged accepted a kind missing from the scheme")
		}
	}()
	registry.New(runtime.NewScheme()).AddManaged(registry.ManagedKind{GVK: awsstoragev1.S3BucketGroupVersionKind})
}

// TestProviderConnection checks that a kind takes from its Provider only the keys it
// names, and nothing when it names none.
func TestProviderConnection(t *testing.T) {
	pc := &registry.ProviderConfig{Connection: map[string][]byte{"accessKeyID": []byte("AKIA"), "secretAccessKey": []byte("s3cr3t"), "empty": nil}}
	for name, tc := range map[string]struct {
		keys []string
		want map[string][]byte
	}{
		"names none":         {want: map[string][]byte{}},
		"names one":          {keys: []string{"accessKeyID"}, want: map[string][]byte{"accessKeyID": []byte("AKIA")}},
		"names an empty one": {keys: []string{"empty", "missing"}, want: map[string][]byte{}},
	} {
		t.Run(name, func(t *testing.T) {
			k := registry.TerraformKind{ProviderConnectionKeys: tc.keys}
			if diff := cmp.Diff(tc.want, k.ProviderConnection(nil, pc)); diff != "" {
				t.Errorf("ProviderConnection (-want +got):\n%s", diff)
			}
		})
	}
	if got := (&registry.TerraformKind{ProviderConnectionKeys: []string{"accessKeyID"}}).ProviderConnection(nil, nil); len(got) != 0 {
		t.Errorf("ProviderConnection(nil) = %v, want nothing", got)
	}
}
