package claimschema

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// refusedByAPIServer is what the API server's own CRD validation says of a CRD whose
// spec.parameters has schema params; empty when it accepts it.
func refusedByAPIServer(t *testing.T, params apiextensionsv1.JSONSchemaProps) string {
	t.Helper()
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props}
	}
	root := obj(map[string]apiextensionsv1.JSONSchemaProps{"spec": obj(map[string]apiextensionsv1.JSONSchemaProps{"parameters": params})})
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "things.example.org"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "example.org", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &root}}}},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: []string{"v1"}}}
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, internal, nil); err != nil {
		t.Fatal(err)
	}
	if errs := validation.ValidateCustomResourceDefinition(context.Background(), internal); len(errs) > 0 {
		return errs.ToAggregate().Error()
	}
	return ""
}

// TestRulesTheAPIServerAccepts: a validation block becomes a CEL rule only when the API
// server accepts it on the field's schema; one it would refuse (a type CEL does not mix,
// a field of any type, a cost over its budget) stays with terraform, listed with the
// reason, instead of making the whole claim kind impossible to define. A for over a map
// does not translate: terraform iterates its values, CEL its keys.
func TestRulesTheAPIServerAccepts(t *testing.T) {
	cases := map[string]struct {
		typ, cond  string
		translated bool
		reason     string // in the Untranslated reason
	}{
		"a number compared":          {"number", `var.v > 1`, true, ""},
		"a string checked":           {"string", `can(regex("^[a-z][a-z0-9-]*$", var.v)) && length(var.v) <= 20`, true, ""},
		"a string in a list":         {"string", `contains(["a", "b"], var.v)`, true, ""},
		"an object's attribute":      {"object({name = string})", `length(var.v.name) > 0`, true, ""},
		"a number equal to an int":   {"number", `var.v == 1`, false, "no matching overload"},
		"number arithmetic":          {"number", `var.v * 2 < 10`, false, "no matching overload"},
		"a number in a list of ints": {"number", `contains([1, 2], var.v)`, false, "no matching overload"},
		"a field of any type":        {"any", `length(var.v) <= 20`, false, "any type"},
		"an untyped field":           {"", `length(var.v) <= 20`, false, "any type"},
		"an unbounded list":          {"list(object({cidr = string}))", `alltrue([for s in var.v : can(cidrhost(s.cidr, 0))])`, false, "cost"},
		"values of a map":            {"map(string)", `alltrue([for s in var.v : length(s) < 5])`, false, "iterates"},
		"attributes of an object":    {"object({a = string})", `anytrue([for s in var.v : s == "x"])`, false, "iterates"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			typ := ""
			if tc.typ != "" {
				typ = "  type = " + tc.typ + "\n"
			}
			src := "variable \"v\" {\n" + typ + "  validation {\n    condition = " + tc.cond + "\n    error_message = \"bad.\"\n  }\n}\n"
			_, res := generate(t, src, Options{})
			rules := res.Parameters.Properties["v"].XValidations
			if refused := refusedByAPIServer(t, res.Parameters); refused != "" {
				t.Fatalf("the API server refuses the schema: %s", refused)
			}
			if tc.translated {
				if len(rules) != 1 || len(res.Untranslated) != 0 {
					t.Errorf("rules %v, untranslated %v; want the rule translated", rules, res.Untranslated)
				}
				return
			}
			if len(rules) != 0 || len(res.Untranslated) != 1 || !strings.Contains(res.Untranslated[0].Reason, tc.reason) || res.Untranslated[0].Condition != tc.cond {
				t.Errorf("rules %v, untranslated %+v; want it untranslated, the reason containing %q", rules, res.Untranslated, tc.reason)
			}
		})
	}
}
