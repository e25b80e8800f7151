package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"terraplane.io/terraplane/internal/kinds"
)

// TestTypedVersion: a kind the server prefers at v1beta1 is read at the version the CLI's
// types are of; a kind at that version, or one the CLI has no types for, is left as it is.
func TestTypedVersion(t *testing.T) {
	scheme := kinds.NewScheme()
	for _, tc := range []struct{ in, want schema.GroupVersionKind }{
		{schema.GroupVersionKind{Group: "terraform.terraplane.io", Version: "v1beta1", Kind: "Module"},
			schema.GroupVersionKind{Group: "terraform.terraplane.io", Version: "v1alpha1", Kind: "Module"}},
		{schema.GroupVersionKind{Group: "storage.terraplane.io", Version: "v1alpha1", Kind: "Bucket"},
			schema.GroupVersionKind{Group: "storage.terraplane.io", Version: "v1alpha1", Kind: "Bucket"}},
		{schema.GroupVersionKind{Group: "platform.example.org", Version: "v1", Kind: "Queue"},
			schema.GroupVersionKind{Group: "platform.example.org", Version: "v1", Kind: "Queue"}},
	} {
		if d := cmp.Diff(tc.want, typedVersion(scheme, tc.in)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, d)
		}
	}
}
