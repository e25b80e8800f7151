package devenv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestPointAtS3(t *testing.T) {
	provider := func(endpoint string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "aws.terraplane.io/v1alpha1", "kind": "Provider",
			"metadata": map[string]any{"name": "local-s3"},
			"spec":     map[string]any{"region": "us-east-1"},
		}}
		if endpoint != "" {
			_ = unstructured.SetNestedField(u.Object, endpoint, "spec", "endpoint")
		}
		return u
	}
	other := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "postgresql.terraplane.io/v1alpha1", "kind": "Provider",
		"spec": map[string]any{"endpoint": QuickstartEndpoint},
	}}
	for _, tc := range []struct {
		name string
		in   *unstructured.Unstructured
		want *unstructured.Unstructured
	}{
		{"quickstart endpoint", provider(QuickstartEndpoint), provider("http://127.0.0.1:9911")},
		{"quickstart endpoint with slash", provider(QuickstartEndpoint + "/"), provider("http://127.0.0.1:9911")},
		{"another endpoint stays", provider("https://s3.example.com"), provider("https://s3.example.com")},
		{"no endpoint stays", provider(""), provider("")},
		{"other kinds stay", other.DeepCopy(), other.DeepCopy()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.DeepCopy()
			if err := PointAtS3("http://127.0.0.1:9911")(got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want.Object, got.Object); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
