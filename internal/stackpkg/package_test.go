package stackpkg

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestAllowedObject: a package ships classes, ProviderConfigs, ClaimDefinitions and the
// classes of the groups its definitions define; nothing else.
func TestAllowedObject(t *testing.T) {
	obj := func(apiVersion, kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName("x")
		return u
	}
	defined := map[string]bool{"platform.example.org": true}
	for _, ok := range []*unstructured.Unstructured{
		obj("terraform.terraplane.io/v1alpha1", "ModuleClass"), obj("database.terraplane.io/v1alpha1", "PostgreSQLInstanceClass"),
		obj("apiextensions.terraplane.io/v1alpha1", "ClaimDefinition"), obj("platform.example.org/v1alpha1", "NetworkClass"),
	} {
		if err := AllowedObject(ok, defined); err != nil {
			t.Errorf("%s refused: %v", ok.GetKind(), err)
		}
	}
	for _, bad := range []*unstructured.Unstructured{
		obj("other.example.org/v1alpha1", "NetworkClass"), obj("platform.example.org/v1alpha1", "Network"),
		obj("v1", "Secret"), obj("stacks.terraplane.io/v1alpha1", "StackClass"),
	} {
		if err := AllowedObject(bad, defined); err == nil {
			t.Errorf("%s %s allowed", bad.GetAPIVersion(), bad.GetKind())
		}
	}
}
