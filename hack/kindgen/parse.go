package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

const (
	claimMarker     = "+terraplane:claim:"
	managedMarker   = "+terraplane:managed:"
	immutableMarker = "+terraplane:immutable="
	groupMarker     = "+groupName="
)

// Package is one API package's generator input.
type Package struct {
	// Name of the Go package.
	Name string
	// Group and Version of the API, from +groupName and the directory name.
	Group, Version string
	// DeclaresGroupVersion is true when a hand-written file declares GroupVersion.
	DeclaresGroupVersion bool
	// Kinds are the managed kinds, sorted by name.
	Kinds []Kind
	// Claims are the portable claim kinds, sorted by name.
	Claims []Claim
	// Providers are the provider kinds, sorted by name.
	Providers []Provider
}

// Claim is one portable claim kind and its portable class.
type Claim struct {
	// Name of the claim kind, e.g. RedisCluster; Class of its class, e.g. RedisClusterClass.
	Name, Class string
	// Params is the parameters struct the claim's spec inlines.
	Params string
	// Noun describes one claimed thing in documentation, e.g. "a Redis cluster".
	Noun string
	// ImmediateOnly, when set, says why the kind's classes cannot wait for a first consumer.
	ImmediateOnly string
}

// Kind is one managed kind and its class.
type Kind struct {
	// Name of the managed kind, e.g. RDSInstance; Class of its class, e.g. RDSInstanceClass.
	Name, Class string
	// Params is the parameters struct, e.g. RDSInstanceParameters.
	Params string
	// Noun describes one resource in documentation, e.g. "an RDS database instance".
	Noun string
	// Immutable are the fields that cannot change once set.
	Immutable []Immutable
}

// Immutable is one forProvider field that cannot change once set.
type Immutable struct {
	// JSON name of the field, its zero value in CEL, and why it cannot change.
	JSON, Zero, Reason string
}

// parsePackage reads the hand-written files of the package in dir; nil means no Go files.
func parsePackage(dir string) (*Package, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var pkg *Package
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated.") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if pkg == nil {
			pkg = &Package{Name: f.Name.Name, Version: filepath.Base(dir)}
		}
		if err := pkg.read(f); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
	}
	if pkg != nil && !pkg.empty() && pkg.Group == "" && !pkg.DeclaresGroupVersion {
		return nil, fmt.Errorf("%s: generated kinds need a %s marker in the package comment", dir, groupMarker)
	}
	if pkg != nil {
		sort.Slice(pkg.Kinds, func(i, j int) bool { return pkg.Kinds[i].Name < pkg.Kinds[j].Name })
		sort.Slice(pkg.Claims, func(i, j int) bool { return pkg.Claims[i].Name < pkg.Claims[j].Name })
		sort.Slice(pkg.Providers, func(i, j int) bool { return pkg.Providers[i].Name < pkg.Providers[j].Name })
	}
	return pkg, nil
}

// read collects the group marker, a GroupVersion declaration, and marked parameter and
// provider spec structs.
func (p *Package) read(f *ast.File) error {
	if f.Doc != nil {
		for _, c := range f.Doc.List {
			if g, ok := strings.CutPrefix(commentText(c), groupMarker); ok {
				p.Group = g
			}
		}
	}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gen.Specs {
			switch s := spec.(type) {
			case *ast.ValueSpec:
				for _, n := range s.Names {
					p.DeclaresGroupVersion = p.DeclaresGroupVersion || n.Name == "GroupVersion"
				}
			case *ast.TypeSpec:
				doc := s.Doc
				if doc == nil {
					doc = gen.Doc
				}
				k, err := readKind(s, doc)
				if err != nil {
					return fmt.Errorf("type %s: %w", s.Name.Name, err)
				}
				if k != nil {
					p.Kinds = append(p.Kinds, *k)
				}
				claims, err := readClaims(s, doc)
				if err != nil {
					return fmt.Errorf("type %s: %w", s.Name.Name, err)
				}
				p.Claims = append(p.Claims, claims...)
				prov, err := readProvider(s, doc)
				if err != nil {
					return fmt.Errorf("type %s: %w", s.Name.Name, err)
				}
				if prov != nil {
					p.Providers = append(p.Providers, *prov)
				}
			}
		}
	}
	return nil
}

// readKind returns the kind a parameters struct's marker declares, or nil without one.
func readKind(s *ast.TypeSpec, doc *ast.CommentGroup) (*Kind, error) {
	var args map[string]string
	for _, c := range commentList(doc) {
		if rest, ok := strings.CutPrefix(commentText(c), managedMarker); ok {
			var err error
			if args, err = markerArgs(rest); err != nil {
				return nil, err
			}
		}
	}
	if args == nil {
		return nil, nil
	}
	st, ok := s.Type.(*ast.StructType)
	if !ok {
		return nil, fmt.Errorf("%s marks a struct type", managedMarker)
	}
	k := &Kind{Name: args["kind"], Class: args["class"], Params: s.Name.Name, Noun: args["noun"]}
	if k.Name == "" || k.Noun == "" {
		return nil, fmt.Errorf("%s needs kind= and noun=", managedMarker)
	}
	if k.Class == "" {
		k.Class = k.Name + "Class"
	}
	for _, field := range st.Fields.List {
		im, err := readImmutable(field)
		if err != nil {
			return nil, err
		}
		if im != nil {
			k.Immutable = append(k.Immutable, *im)
		}
	}
	return k, nil
}

// readClaims returns the claim kinds a parameters struct's markers declare (one struct
// may serve several, as database parameters serve PostgreSQL and MySQL claims).
func readClaims(s *ast.TypeSpec, doc *ast.CommentGroup) ([]Claim, error) {
	var claims []Claim
	for _, c := range commentList(doc) {
		rest, ok := strings.CutPrefix(commentText(c), claimMarker)
		if !ok {
			continue
		}
		args, err := markerArgs(rest)
		if err != nil {
			return nil, err
		}
		if _, ok := s.Type.(*ast.StructType); !ok {
			return nil, fmt.Errorf("%s marks a struct type", claimMarker)
		}
		cl := Claim{Name: args["kind"], Class: args["kind"] + "Class", Params: s.Name.Name, Noun: args["noun"], ImmediateOnly: args["immediateOnly"]}
		if cl.Name == "" || cl.Noun == "" {
			return nil, fmt.Errorf("%s needs kind= and noun=", claimMarker)
		}
		claims = append(claims, cl)
	}
	return claims, nil
}

// empty reports whether the package declares no generated kind.
func (p *Package) empty() bool {
	return len(p.Kinds) == 0 && len(p.Claims) == 0 && len(p.Providers) == 0
}

// readImmutable returns the field's immutability rule, or nil when it has none.
func readImmutable(field *ast.Field) (*Immutable, error) {
	for _, c := range commentList(field.Doc) {
		raw, ok := strings.CutPrefix(commentText(c), immutableMarker)
		if !ok {
			continue
		}
		reason, err := strconv.Unquote(raw)
		if err != nil {
			return nil, fmt.Errorf("%s takes a quoted reason: %w", immutableMarker, err)
		}
		if field.Tag == nil || len(field.Names) != 1 {
			return nil, fmt.Errorf("%s needs a named field with a json tag", immutableMarker)
		}
		tag, _ := strconv.Unquote(field.Tag.Value)
		json, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
		zero, err := zeroValue(field.Type)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", field.Names[0].Name, err)
		}
		return &Immutable{JSON: json, Zero: zero, Reason: reason}, nil
	}
	return nil, nil
}

// zeroValue is the CEL literal of a scalar field's zero value.
func zeroValue(t ast.Expr) (string, error) {
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	id, ok := t.(*ast.Ident)
	switch {
	case ok && id.Name == "string":
		return "''", nil
	case ok && id.Name == "bool":
		return "false", nil
	case ok && strings.HasPrefix(id.Name, "int"):
		return "0", nil
	}
	return "", fmt.Errorf("%s applies to string, bool and integer fields", immutableMarker)
}

// markerArgs parses key=value pairs separated by commas; a value may be a quoted string,
// or a raw string in backticks as kubebuilder's JSONPath takes.
func markerArgs(s string) (map[string]string, error) {
	args := map[string]string{}
	for s != "" {
		key, rest, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fmt.Errorf("marker argument %q has no value", s)
		}
		var value string
		if strings.HasPrefix(rest, `"`) {
			quoted, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, fmt.Errorf("marker argument %s: %w", key, err)
			}
			value, _ = strconv.Unquote(quoted)
			rest = rest[len(quoted):]
		} else if raw, ok := strings.CutPrefix(rest, "`"); ok {
			end := strings.IndexByte(raw, '`')
			if end < 0 {
				return nil, fmt.Errorf("marker argument %s: unterminated raw string", key)
			}
			value, rest = raw[:end], raw[end+1:]
		} else {
			end := strings.IndexByte(rest, ',')
			if end < 0 {
				end = len(rest)
			}
			value, rest = rest[:end], rest[end:]
		}
		if rest != "" && rest[0] != ',' {
			return nil, fmt.Errorf("marker argument %s: a comma must follow its value", key)
		}
		args[key] = value
		s = strings.TrimPrefix(rest, ",")
	}
	return args, nil
}

func commentList(g *ast.CommentGroup) []*ast.Comment {
	if g == nil {
		return nil
	}
	return g.List
}

// commentText is a line comment's text without its slashes and leading space.
func commentText(c *ast.Comment) string {
	return strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
}
