package claimschema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestFieldPathAndDescribe: paths read as a claim author writes them.
func TestFieldPathAndDescribe(t *testing.T) {
	for want, path := range map[string][]string{
		"name":           {"name"},
		"subnets[].cidr": {"subnets", AnyItem, "cidr"},
		"tags{}":         {"tags", AnyValue},
		"a{}[].b":        {"a", AnyValue, AnyItem, "b"},
		"":               nil,
	} {
		if got := FieldPath(path); got != want {
			t.Errorf("FieldPath(%v) = %q, want %q", path, got, want)
		}
	}
	changes := []Change{{Path: []string{"size"}, Kind: Removed}, {Path: []string{"tags", AnyValue}, Kind: Retyped, Detail: "string → number"}}
	if got, want := Describe(changes), "size removed, tags{} retyped (string → number)"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

// TestBreakingChangesOfShapes: a field that now takes anything breaks nothing; a list
// that became a map, or a map a plain object, is retyped; a new required field with a
// default breaks nothing; a removed field keeps its default.
func TestBreakingChangesOfShapes(t *testing.T) {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	list := apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}}
	mapOf := apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &str}}
	plain := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": str}}
	anything := apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptrTrue()}
	withDefault := str
	withDefault.Default = &apiextensionsv1.JSON{Raw: []byte(`"x"`)}
	obj := func(props map[string]apiextensionsv1.JSONSchemaProps, required ...string) apiextensionsv1.JSONSchemaProps {
		return apiextensionsv1.JSONSchemaProps{Type: "object", Properties: props, Required: required}
	}
	cases := map[string]struct {
		old, new apiextensionsv1.JSONSchemaProps
		want     []Change
	}{
		"now anything":             {obj(map[string]apiextensionsv1.JSONSchemaProps{"f": list}), obj(map[string]apiextensionsv1.JSONSchemaProps{"f": anything}), nil},
		"anything now typed":       {obj(map[string]apiextensionsv1.JSONSchemaProps{"f": anything}), obj(map[string]apiextensionsv1.JSONSchemaProps{"f": str}), []Change{{Path: []string{"f"}, Kind: Retyped, Detail: "any → string"}}},
		"a list now a map":         {obj(map[string]apiextensionsv1.JSONSchemaProps{"f": list}), obj(map[string]apiextensionsv1.JSONSchemaProps{"f": mapOf}), []Change{{Path: []string{"f"}, Kind: Retyped, Detail: "array → map"}}},
		"a map now an object":      {obj(map[string]apiextensionsv1.JSONSchemaProps{"f": mapOf}), obj(map[string]apiextensionsv1.JSONSchemaProps{"f": plain}), []Change{{Path: []string{"f"}, Kind: Retyped, Detail: "map → object"}}},
		"required with a default":  {obj(nil), obj(map[string]apiextensionsv1.JSONSchemaProps{"f": withDefault}, "f"), nil},
		"required, already":        {obj(map[string]apiextensionsv1.JSONSchemaProps{"f": str}, "f"), obj(map[string]apiextensionsv1.JSONSchemaProps{"f": str}, "f"), nil},
		"removed with its default": {obj(map[string]apiextensionsv1.JSONSchemaProps{"f": withDefault}), obj(nil), []Change{{Path: []string{"f"}, Kind: Removed, Default: "x"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, BreakingChanges(tc.old, tc.new)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAffectsDefaults: a claim whose value of a removed field is its default (which the
// API server filled in) loses nothing; any other value is lost.
func TestAffectsDefaults(t *testing.T) {
	removed := Change{Path: []string{"size"}, Kind: Removed, Default: float64(3)}
	cases := map[string]struct {
		params any
		want   bool
	}{
		"the default":       {map[string]any{"size": int64(3)}, false},
		"the default, json": {map[string]any{"size": float64(3)}, false},
		"another value":     {map[string]any{"size": 4}, true},
		"not set":           {map[string]any{}, false},
		"no parameters":     {nil, false},
	}
	for name, tc := range cases {
		if got := removed.Affects(tc.params); got != tc.want {
			t.Errorf("%s: Affects = %v, want %v", name, got, tc.want)
		}
	}
}
