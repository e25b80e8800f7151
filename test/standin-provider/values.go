package main

import (
	"encoding/base64"
	"fmt"
	"hash/fnv"
	"math/big"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// attributeAt is the attribute a path names directly in block (nil for a path inside an
// attribute's value, or one that names a nested block).
func attributeAt(b *tfprotov5.SchemaBlock, p *tftypes.AttributePath) *tfprotov5.SchemaAttribute {
	steps := p.Steps()
	cur := b
	for i := 0; i < len(steps); i++ {
		name, ok := steps[i].(tftypes.AttributeName)
		if !ok {
			return nil
		}
		if a := findAttribute(cur, string(name)); a != nil {
			if i == len(steps)-1 {
				return a
			}
			return nil
		}
		nb := findBlock(cur, string(name))
		if nb == nil {
			return nil
		}
		cur = nb.Block
		if nb.Nesting != tfprotov5.SchemaNestedBlockNestingModeSingle && nb.Nesting != tfprotov5.SchemaNestedBlockNestingModeGroup {
			i++ // the element's key or index
		}
	}
	return nil
}

func findAttribute(b *tfprotov5.SchemaBlock, name string) *tfprotov5.SchemaAttribute {
	for _, a := range b.Attributes {
		if a.Name == name {
			return a
		}
	}
	return nil
}

func findBlock(b *tfprotov5.SchemaBlock, name string) *tfprotov5.SchemaNestedBlock {
	for _, nb := range b.BlockTypes {
		if nb.TypeName == name {
			return nb
		}
	}
	return nil
}

// blockAt is the nested block a path names (nil for anything else).
func blockAt(b *tfprotov5.SchemaBlock, p *tftypes.AttributePath) *tfprotov5.SchemaNestedBlock {
	steps := p.Steps()
	if len(steps) == 0 {
		return nil
	}
	name, ok := steps[len(steps)-1].(tftypes.AttributeName)
	if !ok {
		return nil
	}
	parent := b
	if len(steps) > 1 {
		nb := blockAt(b, tftypes.NewAttributePathWithSteps(trimKey(steps[:len(steps)-1])))
		if nb == nil {
			return nil
		}
		parent = nb.Block
	}
	return findBlock(parent, string(name))
}

// trimKey drops a trailing element key: the path of the block the element is in.
func trimKey(steps []tftypes.AttributePathStep) []tftypes.AttributePathStep {
	if _, ok := steps[len(steps)-1].(tftypes.AttributeName); !ok {
		return steps[:len(steps)-1]
	}
	return steps
}

// computedBlock reports a list or set block the provider fills in when the
// configuration leaves it out: the SDK's optional and computed blocks, which the schema
// does not mark; the stand-in takes a block with a computed-only attribute for one
// (GKE's master_auth).
func computedBlock(nb *tfprotov5.SchemaNestedBlock) bool {
	if nb == nil || nb.MinItems > 0 || (nb.Nesting != tfprotov5.SchemaNestedBlockNestingModeList && nb.Nesting != tfprotov5.SchemaNestedBlockNestingModeSet) {
		return false
	}
	for _, a := range nb.Block.Attributes {
		if a.Computed && !a.Optional && !a.Required {
			return true
		}
	}
	return false
}

// emptyCollection reports a null or empty list or set.
func emptyCollection(v tftypes.Value) bool {
	if v.IsNull() {
		return true
	}
	var elems []tftypes.Value
	return v.IsKnown() && v.As(&elems) == nil && len(elems) == 0
}

// unknownComputed plans v: every computed attribute that is null, and every computed
// block the configuration leaves empty, keeps its prior value or, without one, is
// unknown: what a provider plans for values only the cloud knows.
func unknownComputed(b *tfprotov5.SchemaBlock, prior, v tftypes.Value) (tftypes.Value, error) {
	return tftypes.Transform(v, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		a := attributeAt(b, p)
		switch {
		case a != nil && a.Computed && v.IsNull():
		case a == nil && computedBlock(blockAt(b, p)) && emptyCollection(v):
		default:
			return v, nil
		}
		if !prior.IsNull() {
			if before, _, err := tftypes.WalkAttributePath(prior, p); err == nil {
				if pv, ok := before.(tftypes.Value); ok && !pv.IsNull() {
					return pv, nil
				}
			}
		}
		return tftypes.NewValue(v.Type(), tftypes.UnknownValue), nil
	})
}

// fillUnknown gives every unknown value in v (and, with nulls, every null computed
// attribute) a deterministic value of its type, seeded by typeName, the path and seed.
func fillUnknown(b *tfprotov5.SchemaBlock, typeName, seed string, v tftypes.Value, nulls bool) (tftypes.Value, error) {
	return tftypes.Transform(v, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if v.IsKnown() && !(nulls && v.IsNull()) {
			return v, nil
		}
		if v.IsNull() {
			if a := attributeAt(b, p); a == nil || !a.Computed {
				return v, nil
			}
		}
		return made(v.Type(), lastName(p), typeName+"|"+p.String()+"|"+seed), nil
	})
}

// lastName is the last attribute name of a path.
func lastName(p *tftypes.AttributePath) string {
	steps := p.Steps()
	for i := len(steps) - 1; i >= 0; i-- {
		if n, ok := steps[i].(tftypes.AttributeName); ok {
			return string(n)
		}
	}
	return "value"
}

// made is the deterministic value the stand-in gives an attribute named name of type t:
// addresses from the documentation range 192.0.2.0/24, ports above 10000, base64 text
// for certificates and keys, name-<hash> for other strings.
func made(t tftypes.Type, name, seed string) tftypes.Value {
	h := hash(seed)
	switch {
	case t.Is(tftypes.String), t.Is(tftypes.DynamicPseudoType):
		return tftypes.NewValue(tftypes.String, madeString(name, h))
	case t.Is(tftypes.Number):
		n := int64(h%100 + 1)
		if strings.Contains(name, "port") {
			n = int64(10000 + h%50000)
		}
		return tftypes.NewValue(t, new(big.Float).SetInt64(n))
	case t.Is(tftypes.Bool):
		return tftypes.NewValue(t, true)
	case t.Is(tftypes.List{}), t.Is(tftypes.Set{}):
		e := elementType(t)
		return tftypes.NewValue(t, []tftypes.Value{made(e, name, seed+"[0]")})
	case t.Is(tftypes.Map{}):
		return tftypes.NewValue(t, map[string]tftypes.Value{"standin": made(t.(tftypes.Map).ElementType, name, seed+"[standin]")})
	case t.Is(tftypes.Object{}):
		vals := map[string]tftypes.Value{}
		for n, at := range t.(tftypes.Object).AttributeTypes {
			vals[n] = made(at, n, seed+"."+n)
		}
		return tftypes.NewValue(t, vals)
	}
	return tftypes.NewValue(t, nil)
}

func madeString(name string, h uint32) string {
	switch {
	case strings.Contains(name, "ip_address") || name == "host" || strings.HasSuffix(name, "_ip") || strings.Contains(name, "endpoint"):
		return fmt.Sprintf("192.0.2.%d", h%250+1)
	case strings.Contains(name, "certificate") || strings.HasSuffix(name, "_key") || name == "secret":
		return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("standin %s %08x", name, h)))
	}
	return fmt.Sprintf("%s-%08x", name, h)
}

func elementType(t tftypes.Type) tftypes.Type {
	switch tt := t.(type) {
	case tftypes.List:
		return tt.ElementType
	case tftypes.Set:
		return tt.ElementType
	}
	return tftypes.String
}

func hash(s string) uint32 {
	f := fnv.New32a()
	_, _ = f.Write([]byte(s))
	return f.Sum32()
}

// stringAttr is the string attribute name of an object value ("" if unset or unknown).
func stringAttr(v tftypes.Value, name string) string {
	var attrs map[string]tftypes.Value
	if v.IsNull() || !v.IsKnown() || v.As(&attrs) != nil {
		return ""
	}
	var s string
	if a, ok := attrs[name]; ok && a.IsKnown() && !a.IsNull() && a.As(&s) == nil {
		return s
	}
	return ""
}

// plain converts v to JSON-ready Go values, writing sensitive attributes as (sensitive).
func plain(b *tfprotov5.SchemaBlock, p *tftypes.AttributePath, v tftypes.Value) any {
	if a := attributeAt(b, p); a != nil && a.Sensitive && !v.IsNull() {
		return "(sensitive)"
	}
	switch {
	case !v.IsKnown():
		return "(known after apply)"
	case v.IsNull():
		return nil
	case v.Type().Is(tftypes.String):
		var s string
		_ = v.As(&s)
		return s
	case v.Type().Is(tftypes.Number):
		var n big.Float
		_ = v.As(&n)
		f, _ := n.Float64()
		return f
	case v.Type().Is(tftypes.Bool):
		var x bool
		_ = v.As(&x)
		return x
	case v.Type().Is(tftypes.List{}), v.Type().Is(tftypes.Set{}), v.Type().Is(tftypes.Tuple{}):
		var elems []tftypes.Value
		_ = v.As(&elems)
		out := []any{}
		for i, e := range elems {
			out = append(out, plain(b, p.WithElementKeyInt(i), e))
		}
		return out
	}
	var attrs map[string]tftypes.Value
	_ = v.As(&attrs)
	out := map[string]any{}
	for k, e := range attrs {
		if v.Type().Is(tftypes.Object{}) {
			out[k] = plain(b, p.WithAttributeName(k), e)
		} else {
			out[k] = plain(b, p.WithElementKeyString(k), e)
		}
	}
	return out
}
