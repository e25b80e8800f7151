package claimschema

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// convertedNote describes a string field that takes what terraform converts to a string.
const convertedNote = "a string (numbers and true/false are taken as terraform converts them)"

// typeSchema is the OpenAPI schema of values of the type constraint ty. Optional object
// attributes are not required; their defaults are terraform's to apply, not the API
// server's, so that a claim stores what its author wrote. With loose, a string takes
// what terraform converts to one (numbers and bools): the field has no type, and
// terraform checks it at plan.
func typeSchema(ty cty.Type, loose bool) (apiextensionsv1.JSONSchemaProps, error) {
	switch {
	case ty == cty.DynamicPseudoType:
		return apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptrTrue()}, nil
	case ty == cty.String && loose:
		return apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptrTrue(), Description: convertedNote}, nil
	case ty == cty.String:
		return apiextensionsv1.JSONSchemaProps{Type: "string"}, nil
	case ty == cty.Number:
		return apiextensionsv1.JSONSchemaProps{Type: "number"}, nil
	case ty == cty.Bool:
		return apiextensionsv1.JSONSchemaProps{Type: "boolean"}, nil
	case ty.IsListType() || ty.IsSetType():
		set := ty.IsSetType() && ty.ElementType().IsPrimitiveType()
		items, err := typeSchema(ty.ElementType(), loose && !set) // a set's items must have a type
		if err != nil {
			return items, err
		}
		s := apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &items}}
		if set {
			s.XListType = ptr("set")
		}
		return s, nil
	case ty.IsMapType():
		values, err := typeSchema(ty.ElementType(), loose)
		if err != nil {
			return values, err
		}
		return apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &values}}, nil
	case ty.IsTupleType():
		n := int64(len(ty.TupleElementTypes()))
		items := apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptrTrue()}
		return apiextensionsv1.JSONSchemaProps{Type: "array", MinItems: &n, MaxItems: &n,
			Description: "a tuple: " + typeexpr.TypeString(ty),
			Items:       &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &items}}, nil
	case ty.IsObjectType():
		return objectSchema(ty, loose)
	}
	return apiextensionsv1.JSONSchemaProps{}, fmt.Errorf("type %s has no OpenAPI form", typeexpr.TypeString(ty))
}

// objectSchema is the schema of an object type: optional() attributes are not required.
func objectSchema(ty cty.Type, loose bool) (apiextensionsv1.JSONSchemaProps, error) {
	s := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	names := make([]string, 0, len(ty.AttributeTypes()))
	for name := range ty.AttributeTypes() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p, err := typeSchema(ty.AttributeType(name), loose)
		if err != nil {
			return s, fmt.Errorf("attribute %s: %w", name, err)
		}
		if !ty.AttributeOptional(name) {
			s.Required = append(s.Required, name)
		}
		s.Properties[name] = p
	}
	return s, nil
}

// defaultJSON converts a default to ty (its nested defaults applied, as terraform does)
// and writes it as JSON without null attributes; nil for a null default.
func defaultJSON(v cty.Value, ty cty.Type, defaults *typeexpr.Defaults) (*apiextensionsv1.JSON, error) {
	if v.IsNull() {
		return nil, nil
	}
	if defaults != nil {
		v = defaults.Apply(v)
	}
	cv, err := convert.Convert(v, ty)
	if err != nil {
		return nil, err
	}
	if cv.IsNull() {
		return nil, nil
	}
	raw, err := ctyjson.Marshal(cv, cv.Type())
	if err != nil {
		return nil, err
	}
	var decoded any
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return nil, err
	}
	raw, err = json.Marshal(dropNulls(decoded))
	if err != nil {
		return nil, err
	}
	return &apiextensionsv1.JSON{Raw: raw}, nil
}

// dropNulls removes null object members, which a structural default may not hold.
func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(e)
		}
	case []any:
		for i, e := range t {
			t[i] = dropNulls(e)
		}
	}
	return v
}

func ptr[T any](v T) *T { return &v }

func ptrTrue() *bool { return ptr(true) }
