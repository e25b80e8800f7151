package main

import (
	"fmt"
	"sort"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/zclconf/go-cty/cty"
)

// protoSchema converts a schema from its JSON form to the protocol's.
func protoSchema(s *tfjson.Schema) (*tfprotov5.Schema, error) {
	if s == nil || s.Block == nil {
		return &tfprotov5.Schema{Block: &tfprotov5.SchemaBlock{}}, nil
	}
	b, err := protoBlock(s.Block)
	if err != nil {
		return nil, err
	}
	return &tfprotov5.Schema{Version: int64(s.Version), Block: b}, nil
}

func protoBlock(b *tfjson.SchemaBlock) (*tfprotov5.SchemaBlock, error) {
	out := &tfprotov5.SchemaBlock{}
	for _, name := range keys(b.Attributes) {
		a := b.Attributes[name]
		t, err := tfType(a.AttributeType)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out.Attributes = append(out.Attributes, &tfprotov5.SchemaAttribute{Name: name, Type: t,
			Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive})
	}
	for _, name := range keys(b.NestedBlocks) {
		nb := b.NestedBlocks[name]
		inner, err := protoBlock(nb.Block)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		mode, ok := nestingModes[nb.NestingMode]
		if !ok {
			return nil, fmt.Errorf("%s: nesting mode %q", name, nb.NestingMode)
		}
		out.BlockTypes = append(out.BlockTypes, &tfprotov5.SchemaNestedBlock{TypeName: name, Block: inner, Nesting: mode,
			MinItems: int64(nb.MinItems), MaxItems: int64(nb.MaxItems)})
	}
	return out, nil
}

var nestingModes = map[tfjson.SchemaNestingMode]tfprotov5.SchemaNestedBlockNestingMode{
	tfjson.SchemaNestingModeSingle: tfprotov5.SchemaNestedBlockNestingModeSingle,
	tfjson.SchemaNestingModeGroup:  tfprotov5.SchemaNestedBlockNestingModeGroup,
	tfjson.SchemaNestingModeList:   tfprotov5.SchemaNestedBlockNestingModeList,
	tfjson.SchemaNestingModeSet:    tfprotov5.SchemaNestedBlockNestingModeSet,
	tfjson.SchemaNestingModeMap:    tfprotov5.SchemaNestedBlockNestingModeMap,
}

// tfType converts a cty type to the protocol's.
func tfType(t cty.Type) (tftypes.Type, error) {
	switch {
	case t == cty.String:
		return tftypes.String, nil
	case t == cty.Number:
		return tftypes.Number, nil
	case t == cty.Bool:
		return tftypes.Bool, nil
	case t == cty.DynamicPseudoType:
		return tftypes.DynamicPseudoType, nil
	case t.IsListType(), t.IsSetType(), t.IsMapType():
		e, err := tfType(t.ElementType())
		if err != nil {
			return nil, err
		}
		switch {
		case t.IsListType():
			return tftypes.List{ElementType: e}, nil
		case t.IsSetType():
			return tftypes.Set{ElementType: e}, nil
		}
		return tftypes.Map{ElementType: e}, nil
	case t.IsObjectType():
		attrs := map[string]tftypes.Type{}
		for n, at := range t.AttributeTypes() {
			c, err := tfType(at)
			if err != nil {
				return nil, err
			}
			attrs[n] = c
		}
		return tftypes.Object{AttributeTypes: attrs}, nil
	}
	return nil, fmt.Errorf("type %s", t.FriendlyName())
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
