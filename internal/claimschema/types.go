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

// typeSchema is the OpenAPI schema of values of the type constraint ty, with the
// defaults of its optional object attributes.
func typeSchema(ty cty.Type, defaults *typeexpr.Defaults) (apiextensionsv1.JSONSchemaProps, error) {
	switch {
	case ty == cty.DynamicPseudoType:
		return apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptrTrue()}, nil
	case ty == cty.String:
		return apiextensionsv1.JSONSchemaProps{Type: "string"}, nil
	case ty == cty.Number:
		return apiextensionsv1.JSONSchemaProps{Type: "number"}, nil
	case ty == cty.Bool:
		return apiextensionsv1.JSONSchemaProps{Type: "boolean"}, nil
	case ty.IsListType() || ty.IsSetType():
		items, err := typeSchema(ty.ElementType(), child(defaults, ""))
		if err != nil {
			return items, err
		}
		s := apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &items}}
		if ty.IsSetType() && ty.ElementType().IsPrimitiveType() {
			s.XListType = ptr("set")
		}
		return s, nil
	case ty.IsMapType():
		values, err := typeSchema(ty.ElementType(), child(defaults, ""))
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
		return objectSchema(ty, defaults)
	}
	return apiextensionsv1.JSONSchemaProps{}, fmt.Errorf("type %s has no OpenAPI form", typeexpr.TypeString(ty))
}

// objectSchema is the schema of an object type: optional() attributes are not required,
// and carry their defaults.
func objectSchema(ty cty.Type, defaults *typeexpr.Defaults) (apiextensionsv1.JSONSchemaProps, error) {
	s := apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}}
	names := make([]string, 0, len(ty.AttributeTypes()))
	for name := range ty.AttributeTypes() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		at := ty.AttributeType(name)
		p, err := typeSchema(at, child(defaults, name))
		if err != nil {
			return s, fmt.Errorf("attribute %s: %w", name, err)
		}
		if !ty.AttributeOptional(name) {
			s.Required = append(s.Required, name)
		} else if defaults != nil {
			if dv, ok := defaults.DefaultValues[name]; ok {
				if p.Default, err = defaultJSON(dv, at, child(defaults, name)); err != nil {
					return s, fmt.Errorf("attribute %s: default: %w", name, err)
				}
			}
		}
		s.Properties[name] = p
	}
	return s, nil
}

// child is the defaults of an element or attribute, if any.
func child(d *typeexpr.Defaults, key string) *typeexpr.Defaults {
	if d == nil {
		return nil
	}
	return d.Children[key]
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
