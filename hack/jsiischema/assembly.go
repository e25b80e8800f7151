package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// jsiiType is one type of an assembly: a struct (datatype interface) or a class.
type jsiiType struct {
	FQN        string         `json:"fqn"`
	Kind       string         `json:"kind"`
	Datatype   bool           `json:"datatype"`
	Properties []jsiiProperty `json:"properties"`
}

// jsiiProperty is a struct's field or a class's property.
type jsiiProperty struct {
	Name      string  `json:"name"`
	Optional  bool    `json:"optional"`
	Immutable bool    `json:"immutable"`
	Static    bool    `json:"static"`
	Type      typeRef `json:"type"`
	Docs      struct {
		Summary string `json:"summary"`
		Remarks string `json:"remarks"`
	} `json:"docs"`
}

// typeRef is a JSII type reference: a primitive, a named type, a collection or a union.
type typeRef struct {
	Primitive  string `json:"primitive,omitempty"`
	FQN        string `json:"fqn,omitempty"`
	Collection *struct {
		Kind        string  `json:"kind"`
		ElementType typeRef `json:"elementtype"`
	} `json:"collection,omitempty"`
	Union *struct {
		Types []typeRef `json:"types"`
	} `json:"union,omitempty"`
}

// concrete drops cdktf.IResolvable from a union (every argument may be a token).
func (t typeRef) concrete() typeRef {
	if t.Union == nil {
		return t
	}
	for _, u := range t.Union.Types {
		if u.FQN != "cdktf.IResolvable" {
			return u
		}
	}
	return t.Union.Types[0]
}

// property returns the property named name, if any.
func (t *jsiiType) property(name string) (jsiiProperty, bool) {
	for _, p := range t.Properties {
		if p.Name == name {
			return p, true
		}
	}
	return jsiiProperty{}, false
}

// readTypes streams the assembly at path and keeps the types in the given namespaces
// (the submodules "<pkg>.<namespace>."): an assembly is up to 100 MB, and one resource
// needs only its own submodule.
func readTypes(path string, namespaces map[string]bool) (map[string]*jsiiType, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		if key != "types" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("read %s: %w", key, err)
			}
			continue
		}
		return readTypeMap(dec, namespaces)
	}
	return nil, fmt.Errorf("%s has no types", path)
}

// readTypeMap reads the "types" object, decoding only the wanted ones.
func readTypeMap(dec *json.Decoder, namespaces map[string]bool) (map[string]*jsiiType, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	types := map[string]*jsiiType{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		fqn, _ := tok.(string)
		if !namespaces[namespaceOf(fqn)] {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("read type %s: %w", fqn, err)
			}
			continue
		}
		t := &jsiiType{}
		if err := dec.Decode(t); err != nil {
			return nil, fmt.Errorf("read type %s: %w", fqn, err)
		}
		types[fqn] = t
	}
	return types, nil
}

// namespaceOf is the submodule of a fully qualified name: "sqlUser" of
// "@cdktf/provider-google.sqlUser.SqlUserConfig".
func namespaceOf(fqn string) string {
	parts := strings.Split(fqn, ".")
	if len(parts) < 3 {
		return ""
	}
	return parts[len(parts)-2]
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("want %v, got %v", d, tok)
	}
	return nil
}
