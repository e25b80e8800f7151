package claimschema

import (
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// inferSchema types a value of type any from an example of it (its default): an object
// with attributes becomes an object of those fields, none required, and fields it does
// not name are refused; a list whose elements are all objects becomes a list of the
// union of their fields. Anything else, or an empty example, tells nothing (ok false).
func inferSchema(v cty.Value) (apiextensionsv1.JSONSchemaProps, bool) {
	if v.IsNull() || !v.IsKnown() {
		return apiextensionsv1.JSONSchemaProps{}, false
	}
	ty := v.Type()
	switch {
	case (ty.IsObjectType() || ty.IsMapType()) && v.LengthInt() > 0:
		return exampleObject([]cty.Value{v}), true
	case (ty.IsTupleType() || ty.IsListType() || ty.IsSetType()) && v.LengthInt() > 0:
		elems := v.AsValueSlice()
		for _, e := range elems {
			if e.IsNull() || !(e.Type().IsObjectType() || e.Type().IsMapType()) || e.LengthInt() == 0 {
				return apiextensionsv1.JSONSchemaProps{}, false
			}
		}
		items := exampleObject(elems)
		return apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &items}}, true
	}
	return apiextensionsv1.JSONSchemaProps{}, false
}

// exampleObject is the object schema of the union of the examples' attributes, each typed
// from its first example.
func exampleObject(examples []cty.Value) apiextensionsv1.JSONSchemaProps {
	s := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{},
		Description: "typed from the module's default"}
	for _, ex := range examples {
		attrs := ex.AsValueMap()
		keys := make([]string, 0, len(attrs))
		for k := range attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, seen := s.Properties[k]; !seen {
				s.Properties[k] = exampleSchema(attrs[k])
			}
		}
	}
	return s
}

// exampleSchema types one example attribute value; null, empty and mixed values are
// left open.
func exampleSchema(v cty.Value) apiextensionsv1.JSONSchemaProps {
	if v.IsNull() || !v.IsKnown() {
		return apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptrTrue()}
	}
	switch ty := v.Type(); {
	case ty == cty.String:
		return apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptrTrue(), Description: convertedNote}
	case ty == cty.Number:
		return apiextensionsv1.JSONSchemaProps{Type: "number"}
	case ty == cty.Bool:
		return apiextensionsv1.JSONSchemaProps{Type: "boolean"}
	}
	if s, ok := inferSchema(v); ok {
		return s
	}
	return apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptrTrue()}
}

// structuralProblem says why the API server would refuse p as the schema of a
// parameter (it is not structural); empty when it accepts it.
func structuralProblem(p apiextensionsv1.JSONSchemaProps) string {
	root := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"p": p}}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&root, internal, nil); err != nil {
		return err.Error()
	}
	s, err := schema.NewStructural(internal)
	if err != nil {
		return err.Error()
	}
	errs := schema.ValidateStructural(field.NewPath("schema"), s)
	if len(errs) == 0 {
		return ""
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = strings.Replace(e.Error(), "schema.properties[p]", "schema", 1)
	}
	return "not a structural schema: " + strings.Join(msgs, "; ")
}
