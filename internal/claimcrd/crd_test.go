package claimcrd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
)

func TestCRDs(t *testing.T) {
	def := &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: "networks.platform.example.org"},
		Spec: apiextv1.ClaimDefinitionSpec{Group: "platform.example.org",
			Names: apiextv1.ClaimDefinitionNames{Kind: "Network", Plural: "networks", ShortNames: []string{"net"}, Categories: []string{"network", "claim"}}}}
	required := apiextensionsv1.JSONSchemaProps{Type: "object", Required: []string{"name"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string"}}}
	optional := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "number"}}}

	claim := ClaimCRD(def, required)
	if diff := cmp.Diff(apiextensionsv1.CustomResourceDefinitionNames{Kind: "Network", ListKind: "NetworkList", Plural: "networks",
		Singular: "network", ShortNames: []string{"net"}, Categories: []string{"terraplane", "claim", "network"}}, claim.Spec.Names); diff != "" {
		t.Errorf("claim names (-want +got):\n%s", diff)
	}
	if claim.Name != "networks.platform.example.org" || claim.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Errorf("claim CRD %s is %s", claim.Name, claim.Spec.Scope)
	}
	var cols []string
	for _, c := range claim.Spec.Versions[0].AdditionalPrinterColumns {
		cols = append(cols, c.Name)
	}
	if diff := cmp.Diff([]string{"STATUS", "CLASS", "RESOURCE", "READY", "SYNCED", "AGE"}, cols); diff != "" {
		t.Errorf("printer columns (-want +got):\n%s", diff)
	}
	spec := claim.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if diff := cmp.Diff([]string{"parameters"}, spec.Required); diff != "" || spec.Default != nil {
		t.Errorf("a required parameter makes spec.parameters required and spec undefaulted (-want +got):\n%s", diff)
	}
	got, ok := Parameters(claim)
	if !ok || cmp.Diff(required, got) != "" {
		t.Errorf("Parameters(claim CRD) = %v, %v", got, ok)
	}
	spec = ClaimCRD(def, optional).Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	if spec.Required != nil || spec.Default == nil || spec.Properties["parameters"].Default != nil {
		t.Errorf("without required parameters, spec defaults to {} and parameters to nothing, so a claim stores what its author wrote: %+v", spec)
	}

	class := ClassCRD(def)
	if class.Name != "networkclasses.platform.example.org" || class.Spec.Names.Kind != "NetworkClass" ||
		cmp.Diff([]string{"terraplane", "class"}, class.Spec.Names.Categories) != "" {
		t.Errorf("class CRD %s: %+v", class.Name, class.Spec.Names)
	}
	def.Spec.ClassKind = "NetworkTier"
	if got := ClassCRD(def).Name; got != "networktiers.platform.example.org" {
		t.Errorf("class kind NetworkTier: CRD %s", got)
	}
}
