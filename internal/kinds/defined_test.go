package kinds

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/dynclaim"
	"terraplane.io/terraplane/internal/registry"
)

func TestConfigureDefinedModule(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "platform.example.org", Version: "v1alpha1", Kind: "Network"}
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "terraplane-system", Name: "network"}}
	class.SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"size": 1, "region": "eu"}`)}
	class.SpecTemplate.Inputs = []terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}}
	class.SpecTemplate.VariablesFrom = []terraformv1.VariableFrom{{Name: "token", ValueFrom: terraformv1.VariableSource{
		SecretKeyRef: &terraformv1.SecretKeySelector{Name: "class-token", Key: "t"}}}}
	class.Status.Variables = []terraformv1.ModuleVariable{{Name: "name"}, {Name: "size"}, {Name: "token", Sensitive: true}, {Name: "apiSecretRef"}}
	class.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionTrue}}

	claim := dynclaim.NewClaim(gvk)
	claim.Name, claim.Namespace = "net-a", "team-a"
	claim.Spec.Parameters = &apiextensionsv1.JSON{Raw: []byte(`{"name": "ignored", "size": 3, "apiSecretRef": "plain", "zone": "a",
		"tokenSecretRef": {"name": "net-token", "key": "token"}}`)}
	m := &terraformv1.Module{}
	if err := configureDefinedModule(registry.Request{Claim: claim, Class: class}, m); err != nil {
		t.Fatal(err)
	}
	got, err := m.GetForProvider()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "net-a", "size": float64(1), "region": "eu", "apiSecretRef": "plain"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("forProvider (-want +got): parameters by name, then the class's fixed values, which win, then inputs\n%s", diff)
	}
	wantFrom := []terraformv1.VariableFrom{{Name: "token", ValueFrom: terraformv1.VariableSource{
		SecretKeyRef: &terraformv1.SecretKeySelector{Name: "net-token", Key: "token", Namespace: "team-a"}}}}
	if diff := cmp.Diff(wantFrom, m.Spec.VariablesFrom); diff != "" {
		t.Errorf("variablesFrom (-want +got): the claim's Secret replaces the class's\n%s", diff)
	}
}
