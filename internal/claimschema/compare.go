package claimschema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Path segments that stand for every element of an array and every value of a map.
const (
	AnyItem  = "[]"
	AnyValue = "{}"
)

// ChangeKind says how a schema change breaks claims.
type ChangeKind string

// Change kinds.
const (
	// Removed: claims that set the field would lose it.
	Removed ChangeKind = "removed"
	// Retyped: claims that set the field hold a value of the old type.
	Retyped ChangeKind = "retyped"
	// NowRequired: claims that do not set the field become invalid.
	NowRequired ChangeKind = "now required"
)

// Change is one difference between two parameter schemas that breaks the claims it
// affects (Affects).
type Change struct {
	// Path of the field, from spec.parameters: property names, AnyItem, AnyValue.
	Path []string
	// Kind of change.
	Kind ChangeKind
	// Detail, such as "string → number".
	Detail string
	// Default of a removed field: a claim whose value is the default (the API server
	// fills it in) did not ask for the field and loses nothing.
	Default any
}

// String writes the change as e.g. "subnets[].cidr retyped (string → number)".
func (c Change) String() string {
	s := FieldPath(c.Path) + " " + string(c.Kind)
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	return s
}

// FieldPath writes a path as text, e.g. subnets[].cidr.
func FieldPath(path []string) string {
	var b strings.Builder
	for _, p := range path {
		switch p {
		case AnyItem:
			b.WriteString("[]")
		case AnyValue:
			b.WriteString("{}")
		default:
			if b.Len() > 0 {
				b.WriteString(".")
			}
			b.WriteString(p)
		}
	}
	return b.String()
}

// BreakingChanges lists the changes from old to new that can break existing claims:
// fields removed or retyped, and fields newly required without a default. New optional
// fields, descriptions, defaults and validation rules are not among them.
func BreakingChanges(old, new apiextensionsv1.JSONSchemaProps) []Change {
	var out []Change
	compare(nil, old, new, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func compare(path []string, old, new apiextensionsv1.JSONSchemaProps, out *[]Change) {
	if preserves(new) {
		return // anything goes now
	}
	if typeOf(old) != typeOf(new) {
		*out = append(*out, Change{Path: path, Kind: Retyped, Detail: typeOf(old) + " → " + typeOf(new)})
		return
	}
	for name, op := range old.Properties {
		np, ok := new.Properties[name]
		if !ok {
			ch := Change{Path: appendPath(path, name), Kind: Removed}
			if op.Default != nil {
				_ = json.Unmarshal(op.Default.Raw, &ch.Default)
			}
			*out = append(*out, ch)
			continue
		}
		compare(appendPath(path, name), op, np, out)
	}
	for _, name := range new.Required {
		if slices.Contains(old.Required, name) {
			continue
		}
		if p, ok := new.Properties[name]; ok && p.Default != nil {
			continue
		}
		*out = append(*out, Change{Path: appendPath(path, name), Kind: NowRequired})
	}
	if old.Items != nil && old.Items.Schema != nil && new.Items != nil && new.Items.Schema != nil {
		compare(appendPath(path, AnyItem), *old.Items.Schema, *new.Items.Schema, out)
	}
	if oa, na := old.AdditionalProperties, new.AdditionalProperties; oa != nil && oa.Schema != nil && na != nil && na.Schema != nil {
		compare(appendPath(path, AnyValue), *oa.Schema, *na.Schema, out)
	}
}

func appendPath(path []string, seg string) []string {
	return append(slices.Clone(path), seg)
}

func preserves(s apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// typeOf names a schema's type: "string" for a generated string that takes what
// terraform converts, "any" for other preserve-unknown-fields without a type, "map" for
// an object with additionalProperties.
func typeOf(s apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.Type == "" && preserves(s) && strings.HasSuffix(s.Description, convertedNote):
		return "string" // a string that takes what terraform converts
	case s.Type == "" && preserves(s):
		return "any"
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return "map"
	}
	return s.Type
}

// Affects reports whether a claim whose spec.parameters is params is broken by c: it
// sets a removed or retyped field, or lacks a newly required one in an object it sets.
func (c Change) Affects(params any) bool {
	if c.Kind != NowRequired {
		for _, v := range values(params, c.Path) {
			if c.Kind != Removed || c.Default == nil || !reflect.DeepEqual(normal(v), c.Default) {
				return true
			}
		}
		return false
	}
	field := c.Path[len(c.Path)-1]
	for _, parent := range values(params, c.Path[:len(c.Path)-1]) {
		obj, ok := parent.(map[string]any)
		if _, set := obj[field]; parent == nil || ok && !set {
			return true
		}
	}
	return false
}

// normal is v as encoding/json decodes it (numbers as float64).
func normal(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

// values are the values at path in v (every element for AnyItem, every value for AnyValue).
func values(v any, path []string) []any {
	if len(path) == 0 {
		return []any{v}
	}
	var out []any
	switch seg := path[0]; {
	case seg == AnyItem:
		list, _ := v.([]any)
		for _, e := range list {
			out = append(out, values(e, path[1:])...)
		}
	case seg == AnyValue:
		m, _ := v.(map[string]any)
		for _, e := range m {
			out = append(out, values(e, path[1:])...)
		}
	default:
		m, _ := v.(map[string]any)
		if e, ok := m[seg]; ok {
			out = append(out, values(e, path[1:])...)
		}
	}
	return out
}

// Describe lists changes for a message.
func Describe(changes []Change) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = c.String()
	}
	return fmt.Sprint(strings.Join(parts, ", "))
}
