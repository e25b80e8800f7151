package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/zclconf/go-cty/cty"
)

// converter turns one resource's (or data source's) types into a schema block.
type converter struct {
	pkg   string // "@cdktf/provider-google"
	types map[string]*jsiiType
	js    *jsFile
}

// docsLink finds the registry link's anchor, the attribute's exact name.
var docsLink = regexp.MustCompile(`/docs(?:/[^#\s}]*)?#([A-Za-z0-9_]+)`)

// linkName is a property's snake_case name as its registry link gives it ("" if none).
func linkName(p jsiiProperty) string {
	for _, s := range []string{p.Docs.Summary, p.Docs.Remarks} {
		if m := docsLink.FindStringSubmatch(s); m != nil {
			return m[1]
		}
	}
	return ""
}

// short is a type's name without its package and namespace.
func short(fqn string) string { return fqn[strings.LastIndex(fqn, ".")+1:] }

// block converts a struct (config, may be nil for computed-only objects) and the class
// whose getters read it (the resource class or a struct's OutputReference) into a
// schema block: the struct's fields are the arguments, the class's other getters that
// the JavaScript comments as computed are the computed attributes. hclOwner names where
// the JavaScript synthesises the struct's HCL.
func (c *converter) block(config *jsiiType, classFQN, hclOwner string) (*tfjson.SchemaBlock, error) {
	cls := c.types[classFQN]
	if cls == nil {
		return nil, fmt.Errorf("no class %s in the assembly", classFQN)
	}
	flags := c.js.attrs[short(classFQN)]
	b := &tfjson.SchemaBlock{Attributes: map[string]*tfjson.SchemaAttribute{}, NestedBlocks: map[string]*tfjson.SchemaBlockType{}}
	args := map[string]bool{}
	if config != nil {
		for _, p := range config.Properties {
			args[p.Name] = true
			fl, err := argumentFlags(p, flags)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", config.FQN, p.Name, err)
			}
			if err := c.argument(b, p, hclOwner, fl); err != nil {
				return nil, fmt.Errorf("%s: %w", fl.Snake, err)
			}
		}
	}
	for _, camel := range sortedKeys(flags) {
		if fl := flags[camel]; !args[camel] && fl.Computed {
			if err := c.computed(b, cls, camel, fl); err != nil {
				return nil, fmt.Errorf("%s: %w", fl.Snake, err)
			}
		}
	}
	if len(b.Attributes)+len(b.NestedBlocks) == 0 {
		return nil, fmt.Errorf("%s has neither arguments nor computed attributes", classFQN)
	}
	return b, nil
}

// argumentFlags are an argument's name and flags: the JavaScript's comment where it has
// one (it has for nested blocks), else the struct's optional flag. The bindings do not
// record which optional arguments are also computed (a default, a generated name, the
// id), so every optional one is: validation is the same either way, and a plan shows an
// unset one as known after apply rather than null. The name is the registry link's,
// and must agree with the comment's.
func argumentFlags(p jsiiProperty, flags map[string]jsAttr) (jsAttr, error) {
	name := linkName(p)
	fl, ok := flags[p.Name]
	if !ok {
		fl = jsAttr{Snake: name, Optional: p.Optional, Computed: p.Optional, Required: !p.Optional}
	}
	switch {
	case name == "" && fl.Snake == "":
		return fl, fmt.Errorf("neither a registry link nor a comment names it")
	case name != "" && fl.Snake != name:
		return fl, fmt.Errorf("the registry link names it %s, the JavaScript %s", name, fl.Snake)
	}
	return fl, nil
}

// computed adds a computed-only attribute, typed by its getter.
func (c *converter) computed(b *tfjson.SchemaBlock, cls *jsiiType, camel string, fl jsAttr) error {
	gp, ok := cls.property(camel)
	if !ok {
		return fmt.Errorf("no getter %s on %s", camel, cls.FQN)
	}
	t, err := c.ctyType(gp.Type, fl.Set)
	if err != nil {
		return err
	}
	b.Attributes[fl.Snake] = &tfjson.SchemaAttribute{AttributeType: t, Computed: true}
	return nil
}

// argument adds one argument: an attribute, or a nested block.
func (c *converter) argument(b *tfjson.SchemaBlock, p jsiiProperty, hclOwner string, fl jsAttr) error {
	shape := c.js.hcl[hclOwner][fl.Snake]
	if elem, single, ok := c.structOf(p.Type); ok && shape.IsBlock {
		nb, err := c.block(c.types[elem], elem+"OutputReference", short(elem))
		if err != nil {
			return err
		}
		bt := &tfjson.SchemaBlockType{Block: nb, NestingMode: nesting(single, fl.Set || shape.Type == "set", shape.Type)}
		if single && bt.NestingMode != tfjson.SchemaNestingModeSingle {
			bt.MaxItems = 1
		}
		if fl.Required {
			bt.MinItems = 1
		}
		b.NestedBlocks[fl.Snake] = bt
		return nil
	}
	t, err := c.ctyType(p.Type, fl.Set || shape.Type == "set")
	if err != nil {
		return err
	}
	b.Attributes[fl.Snake] = &tfjson.SchemaAttribute{AttributeType: t, Required: fl.Required, Optional: fl.Optional, Computed: fl.Computed}
	return nil
}

// nesting is a block's nesting mode: a single struct is a list of at most one (SDK
// providers) unless the JavaScript synthesises it as a struct (a single block).
func nesting(single, set bool, hclType string) tfjson.SchemaNestingMode {
	switch {
	case hclType == "struct":
		return tfjson.SchemaNestingModeSingle
	case set && !single:
		return tfjson.SchemaNestingModeSet
	default:
		return tfjson.SchemaNestingModeList
	}
}

// structOf reports the struct a config property holds: one (single) or a list of them.
func (c *converter) structOf(t typeRef) (fqn string, single, ok bool) {
	t = t.concrete()
	if t.FQN != "" && c.isStruct(t.FQN) {
		return t.FQN, true, true
	}
	if t.Collection != nil && t.Collection.Kind == "array" {
		e := t.Collection.ElementType.concrete()
		if e.FQN != "" && c.isStruct(e.FQN) {
			return e.FQN, false, true
		}
	}
	return "", false, false
}

func (c *converter) isStruct(fqn string) bool {
	t := c.types[fqn]
	return t != nil && t.Datatype
}

// ctyType is the value type of a property (a config field or a getter).
func (c *converter) ctyType(t typeRef, set bool) (cty.Type, error) {
	t = t.concrete()
	switch {
	case t.Primitive != "":
		return primitive(t.Primitive)
	case t.Collection != nil:
		e, err := c.ctyType(t.Collection.ElementType, false)
		if err != nil {
			return cty.NilType, err
		}
		if t.Collection.Kind == "map" {
			return cty.Map(e), nil
		}
		if set {
			return cty.Set(e), nil
		}
		return cty.List(e), nil
	case t.FQN != "":
		return c.namedType(t.FQN, set)
	}
	return cty.NilType, fmt.Errorf("a type with neither primitive, collection nor name")
}

func primitive(p string) (cty.Type, error) {
	switch p {
	case "string":
		return cty.String, nil
	case "number":
		return cty.Number, nil
	case "boolean":
		return cty.Bool, nil
	case "any", "json":
		return cty.DynamicPseudoType, nil
	}
	return cty.NilType, fmt.Errorf("primitive %s", p)
}

// cdktfMaps are the binding's map getters and the types they read.
var cdktfMaps = map[string]cty.Type{
	"cdktf.StringMap": cty.Map(cty.String), "cdktf.NumberMap": cty.Map(cty.Number),
	"cdktf.BooleanMap": cty.Map(cty.Bool), "cdktf.AnyMap": cty.Map(cty.DynamicPseudoType),
	"cdktf.StringMapList": cty.List(cty.Map(cty.String)), "cdktf.NumberMapList": cty.List(cty.Map(cty.Number)),
	"cdktf.BooleanMapList": cty.List(cty.Map(cty.Bool)), "cdktf.AnyMapList": cty.List(cty.Map(cty.DynamicPseudoType)),
}

// namedType is the type a named getter type reads: a boolean (IResolvable), a map, or
// a computed list, set or map of objects (a ...List/...Map class of OutputReferences).
func (c *converter) namedType(fqn string, set bool) (cty.Type, error) {
	if fqn == "cdktf.IResolvable" {
		return cty.Bool, nil // getBooleanAttribute
	}
	if t, ok := cdktfMaps[fqn]; ok {
		return t, nil
	}
	base, wrap := fqn, cty.List
	switch {
	case strings.HasSuffix(fqn, "List"):
		base = strings.TrimSuffix(fqn, "List")
		if set {
			wrap = cty.Set
		}
	case strings.HasSuffix(fqn, "Map"):
		base, wrap = strings.TrimSuffix(fqn, "Map"), cty.Map
	case strings.HasSuffix(fqn, "OutputReference"):
		base = strings.TrimSuffix(fqn, "OutputReference")
	default:
		return cty.NilType, fmt.Errorf("unknown getter type %s", fqn)
	}
	obj, err := c.objectType(base + "OutputReference")
	if err != nil {
		return cty.NilType, err
	}
	return wrap(obj), nil
}

// objectType is the object a computed nested value holds: its class's getters.
func (c *converter) objectType(classFQN string) (cty.Type, error) {
	b, err := c.block(c.types[strings.TrimSuffix(classFQN, "OutputReference")], classFQN, short(strings.TrimSuffix(classFQN, "OutputReference")))
	if err != nil {
		return cty.NilType, err
	}
	attrs := map[string]cty.Type{}
	for n, a := range b.Attributes {
		attrs[n] = a.AttributeType
	}
	for n, nb := range b.NestedBlocks {
		o, err := blockObject(nb.Block)
		if err != nil {
			return cty.NilType, err
		}
		attrs[n] = cty.List(o)
	}
	return cty.Object(attrs), nil
}

func blockObject(b *tfjson.SchemaBlock) (cty.Type, error) {
	attrs := map[string]cty.Type{}
	for n, a := range b.Attributes {
		attrs[n] = a.AttributeType
	}
	for n, nb := range b.NestedBlocks {
		o, err := blockObject(nb.Block)
		if err != nil {
			return cty.NilType, err
		}
		attrs[n] = cty.List(o)
	}
	return cty.Object(attrs), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
