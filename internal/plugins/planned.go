package plugins

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	ctymsgpack "github.com/zclconf/go-cty/cty/msgpack"
	"google.golang.org/protobuf/encoding/protowire"
)

// schemaBlock is a resource type's schema as far as reading its values needs: each
// attribute's type and sensitivity, and the nested blocks (protocols 5 and 6 share the
// field numbers read here).
type schemaBlock struct {
	attrs  map[string]schemaAttr
	blocks map[string]nestedBlock
}

// schemaAttr is one attribute: a type, or (protocol 6) nested attributes.
type schemaAttr struct {
	ty        cty.Type
	nested    *schemaBlock
	nesting   nesting
	sensitive bool
}

// nestedBlock is a block type inside a block, and how its blocks nest.
type nestedBlock struct {
	block   *schemaBlock
	nesting nesting
}

// nesting is the protocol's nesting mode of a nested block or nested attribute.
type nesting int

const (
	nestSingle nesting = 1
	nestList   nesting = 2
	nestSet    nesting = 3
	nestMap    nesting = 4
	nestGroup  nesting = 5
)

// typeSchema reads the schema of type typeName from a schema answer's map of resource
// or data source schemas (field kind); ok is false when the answer has none.
func typeSchema(answer []byte, kind protowire.Number, typeName string) (b *schemaBlock, ok bool, err error) {
	err = eachField(answer, func(num protowire.Number, v []byte) error {
		if num != kind || ok {
			return nil
		}
		if name, _ := mapKey(v); name != typeName {
			return nil
		}
		ok = true
		return eachField(v, func(num protowire.Number, schema []byte) error {
			if num != 2 {
				return nil
			}
			return eachField(schema, func(num protowire.Number, block []byte) error {
				if num == 2 {
					b, err = readBlock(block)
				}
				return err
			})
		})
	})
	if err != nil {
		return nil, false, fmt.Errorf("read the schema of %s: %w", typeName, err)
	}
	if ok && b == nil {
		b = &schemaBlock{}
	}
	return b, ok, nil
}

// readBlock reads a Block message: attributes (2) and block types (3).
func readBlock(msg []byte) (*schemaBlock, error) {
	b := &schemaBlock{attrs: map[string]schemaAttr{}, blocks: map[string]nestedBlock{}}
	err := eachField(msg, func(num protowire.Number, v []byte) error {
		switch num {
		case 2:
			name, a, err := readAttr(v)
			b.attrs[name] = a
			return err
		case 3:
			var name string
			nb := nestedBlock{block: &schemaBlock{}}
			err := eachField(v, func(num protowire.Number, f []byte) error {
				var err error
				switch num {
				case 1:
					name = string(f)
				case 2:
					nb.block, err = readBlock(f)
				case 3:
					nb.nesting = nesting(varint(f))
				}
				return err
			})
			b.blocks[name] = nb
			return err
		}
		return nil
	})
	return b, err
}

// readAttr reads an Attribute message: name (1), type (2, cty's JSON), sensitive (7)
// and nested type (10, an Object of attributes (1) and nesting (3)).
func readAttr(msg []byte) (string, schemaAttr, error) {
	var name string
	var a schemaAttr
	err := eachField(msg, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			name = string(v)
		case 2:
			if len(v) == 0 {
				return nil
			}
			ty, err := ctyjson.UnmarshalType(v)
			if err != nil {
				return fmt.Errorf("attribute type %s: %w", v, err)
			}
			a.ty = ty
		case 7:
			a.sensitive = varint(v) != 0
		case 10:
			nested := &schemaBlock{attrs: map[string]schemaAttr{}}
			err := eachField(v, func(num protowire.Number, f []byte) error {
				switch num {
				case 1:
					n, sub, err := readAttr(f)
					nested.attrs[n] = sub
					return err
				case 3:
					a.nesting = nesting(varint(f))
				}
				return nil
			})
			a.nested = nested
			return err
		}
		return nil
	})
	return name, a, err
}

// impliedType is the type of a block's values.
func (b *schemaBlock) impliedType() cty.Type {
	fields := map[string]cty.Type{}
	for name, a := range b.attrs {
		fields[name] = a.impliedType()
	}
	for name, nb := range b.blocks {
		fields[name] = nest(nb.block.impliedType(), nb.nesting)
	}
	return cty.Object(fields)
}

// impliedType is the type of an attribute's values.
func (a schemaAttr) impliedType() cty.Type {
	if a.nested == nil {
		return a.ty
	}
	return nest(a.nested.impliedType(), a.nesting)
}

// nest is the type of elements of type elem nested as n says.
func nest(elem cty.Type, n nesting) cty.Type {
	switch n {
	case nestList:
		if elem.HasDynamicTypes() {
			return cty.DynamicPseudoType
		}
		return cty.List(elem)
	case nestSet:
		return cty.Set(elem)
	case nestMap:
		if elem.HasDynamicTypes() {
			return cty.DynamicPseudoType
		}
		return cty.Map(elem)
	}
	return elem
}

// decodeValue reads a DynamicValue message (msgpack in 1, JSON in 2) of type ty.
func decodeValue(msg []byte, ty cty.Type) (cty.Value, error) {
	var val cty.Value
	set := false
	err := eachField(msg, func(num protowire.Number, v []byte) error {
		var err error
		switch num {
		case 1:
			val, err = ctymsgpack.Unmarshal(v, ty)
			set = true
		case 2:
			val, err = ctyjson.Unmarshal(v, ty)
			set = true
		}
		return err
	})
	if err == nil && !set {
		val = cty.NullVal(ty)
	}
	return val, err
}

// jsonValue is v as terraform's plan JSON shows a value after a change: the known part
// (an unknown attribute left out, an unknown element null), and where it is unknown.
func jsonValue(v cty.Value) (known, unknown any) {
	if !v.IsKnown() {
		return nil, true
	}
	if v.IsNull() {
		return nil, false
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString(), false
	case ty == cty.Bool:
		return v.True(), false
	case ty == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return f, false
	case ty.IsObjectType() || ty.IsMapType():
		out, unk := map[string]any{}, map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			kv, ku := jsonValue(e)
			if ku != false {
				unk[k.AsString()] = ku
			}
			if e.IsKnown() {
				out[k.AsString()] = kv
			}
		}
		return out, unk
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		out, unk := []any{}, []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			kv, ku := jsonValue(e)
			out, unk = append(out, kv), append(unk, ku)
		}
		return out, unk
	}
	return nil, false
}

// sensitiveMask is where the schema b marks v sensitive, as terraform's plan JSON
// shows it (after_sensitive): true on a sensitive attribute, the shape of the value
// around it.
func (b *schemaBlock) sensitiveMask(v cty.Value) any {
	out := map[string]any{}
	if v.IsNull() || !v.IsKnown() || !v.Type().IsObjectType() {
		return out
	}
	for name, a := range b.attrs {
		if !v.Type().HasAttribute(name) {
			continue
		}
		switch {
		case a.sensitive:
			out[name] = true
		case a.nested != nil:
			if m := nestedMask(v.GetAttr(name), a.nested, a.nesting); m != nil {
				out[name] = m
			}
		}
	}
	for name, nb := range b.blocks {
		if v.Type().HasAttribute(name) {
			if m := nestedMask(v.GetAttr(name), nb.block, nb.nesting); m != nil {
				out[name] = m
			}
		}
	}
	return out
}

// nestedMask is the mask of v, values of block nested as n says; nil when unknown.
func nestedMask(v cty.Value, block *schemaBlock, n nesting) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	switch n {
	case nestList, nestSet:
		out := []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = append(out, block.sensitiveMask(e))
		}
		return out
	case nestMap:
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			out[k.AsString()] = block.sensitiveMask(e)
		}
		return out
	}
	return block.sensitiveMask(v)
}

// eachField calls fn with each length-delimited or varint field of msg (a varint's
// value encoded back as its bytes, read with varint).
func eachField(msg []byte, fn func(num protowire.Number, v []byte) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return protowire.ParseError(n)
		}
		msg = msg[n:]
		var v []byte
		switch typ {
		case protowire.BytesType:
			b, m := protowire.ConsumeBytes(msg)
			if m < 0 {
				return protowire.ParseError(m)
			}
			v, n = b, m
		case protowire.VarintType:
			x, m := protowire.ConsumeVarint(msg)
			if m < 0 {
				return protowire.ParseError(m)
			}
			v, n = protowire.AppendVarint(nil, x), m
		default:
			n = protowire.ConsumeFieldValue(num, typ, msg)
			if n < 0 {
				return protowire.ParseError(n)
			}
			msg = msg[n:]
			continue
		}
		msg = msg[n:]
		if err := fn(num, v); err != nil {
			return err
		}
	}
	return nil
}

// varint reads a varint field's value as eachField gives it.
func varint(v []byte) uint64 {
	x, _ := protowire.ConsumeVarint(v)
	return x
}
