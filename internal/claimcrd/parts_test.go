package claimcrd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
)

// TestParametersOfOtherCRDs: only a claim CRD of this version with spec.parameters has
// parameters to read.
func TestParametersOfOtherCRDs(t *testing.T) {
	def := &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: apiextv1.ClaimDefinitionSpec{Group: "g.io", Names: apiextv1.ClaimDefinitionNames{Kind: "Queue", Plural: "queues"}}}
	otherVersion := ClaimCRD(def, apiextensionsv1.JSONSchemaProps{Type: "object"})
	otherVersion.Spec.Versions[0].Name = "v1beta1"
	noSchema := ClaimCRD(def, apiextensionsv1.JSONSchemaProps{Type: "object"})
	noSchema.Spec.Versions[0].Schema = nil
	for name, c := range map[string]*apiextensionsv1.CustomResourceDefinition{
		"a class CRD":          ClassCRD(def),
		"another version only": otherVersion,
		"no schema":            noSchema,
		"no versions":          {},
	} {
		if p, ok := Parameters(c); ok {
			t.Errorf("%s: Parameters = %+v, true; want none", name, p)
		}
	}
}

// TestCRDCommon: both CRDs carry the definition's label, serve and store this version
// only, with a status subresource; the class plural of a kind ending in s is -es.
func TestCRDCommon(t *testing.T) {
	def := &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: "buses.g.io"},
		Spec: apiextv1.ClaimDefinitionSpec{Group: "g.io", ClassKind: "BusClass", Names: apiextv1.ClaimDefinitionNames{Kind: "Bus", Plural: "buses"}}}
	for _, c := range []*apiextensionsv1.CustomResourceDefinition{ClaimCRD(def, apiextensionsv1.JSONSchemaProps{Type: "object"}), ClassCRD(def)} {
		v := c.Spec.Versions
		if c.Labels[DefinitionLabel] != "buses.g.io" || len(v) != 1 || v[0].Name != Version || !v[0].Served || !v[0].Storage ||
			v[0].Subresources == nil || v[0].Subresources.Status == nil {
			t.Errorf("%s: labels %v, versions %+v", c.Name, c.Labels, v)
		}
	}
	if got := ClassCRD(def).Spec.Names; got.Plural != "busclasses" || got.Singular != "busclass" || got.ListKind != "BusClassList" {
		t.Errorf("class names = %+v", got)
	}
}

// TestCategories: the base categories come first, the definition's follow once each.
func TestCategories(t *testing.T) {
	for _, tc := range []struct{ extra, want []string }{
		{nil, []string{"terraplane", "claim"}},
		{[]string{"claim", "net", "net"}, []string{"terraplane", "claim", "net"}},
	} {
		if diff := cmp.Diff(tc.want, categories(tc.extra, "terraplane", "claim")); diff != "" {
			t.Errorf("categories(%v) (-want +got):\n%s", tc.extra, diff)
		}
	}
}
