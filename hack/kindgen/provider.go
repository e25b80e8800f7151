package main

import (
	"fmt"
	"go/ast"
	"slices"
	"sort"
	"strconv"
	"strings"
)

const (
	providerMarker = "+terraplane:provider:"
	columnMarker   = "+terraplane:provider:printcolumn:"
)

// columnTypes are the printer column types the API server accepts.
var columnTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "date": true}

// Provider is one provider kind (a Provider or ProviderConfig) around a marked spec struct.
type Provider struct {
	// Name of the kind, e.g. Provider; Spec of its spec struct, e.g. ProviderSpec.
	Name, Spec string
	// Doc is the kind's doc comment after its name, one entry a line.
	Doc []string
	// Status is the status type, which inlines common.ProviderStatus; empty means
	// common.ProviderStatus itself.
	Status string
	// Columns are the kind's own printer columns, shown before USERS and AGE.
	Columns []PrintColumn
	// ShortNames are the kind's kubectl short names; Categories its categories besides
	// terraplane and provider. Two kinds of one name in different groups (the
	// ProviderConfigs) need them, or kubectl picks one of them for the bare name.
	ShortNames, Categories []string
}

// PrintColumn is one kind-specific printer column.
type PrintColumn struct {
	// Name is the header, Type the OpenAPI type, JSONPath what the column shows.
	Name, Type, JSONPath string
}

// readProvider returns the provider kind a spec struct's markers declare, or nil without one.
func readProvider(s *ast.TypeSpec, doc *ast.CommentGroup) (*Provider, error) {
	var p *Provider
	var columns []PrintColumn
	for _, c := range commentList(doc) {
		text := commentText(c)
		if rest, ok := strings.CutPrefix(text, columnMarker); ok {
			col, err := readColumn(rest)
			if err != nil {
				return nil, err
			}
			columns = append(columns, col)
		} else if rest, ok := strings.CutPrefix(text, providerMarker); ok {
			if p != nil {
				return nil, fmt.Errorf("%s appears twice", providerMarker)
			}
			var err error
			if p, err = providerArgs(s.Name.Name, rest); err != nil {
				return nil, err
			}
		}
	}
	if p == nil {
		if len(columns) > 0 {
			return nil, fmt.Errorf("%s needs a %skind=... marker", columnMarker, providerMarker)
		}
		return nil, nil
	}
	if _, ok := s.Type.(*ast.StructType); !ok {
		return nil, fmt.Errorf("%s marks a struct type", providerMarker)
	}
	p.Columns = columns
	return p, nil
}

// providerArgs reads the kind=, doc= and optional status=, shortNames= and categories=
// (both ;-separated) arguments of a provider marker.
func providerArgs(spec, rest string) (*Provider, error) {
	args, err := markerArgs(rest)
	if err != nil {
		return nil, err
	}
	if err := onlyKeys(args, "kind", "doc", "status", "shortNames", "categories"); err != nil {
		return nil, fmt.Errorf("%s %w", providerMarker, err)
	}
	if args["kind"] == "" || args["doc"] == "" {
		return nil, fmt.Errorf("%s needs kind= and doc=", providerMarker)
	}
	return &Provider{Name: args["kind"], Spec: spec, Doc: strings.Split(args["doc"], "\n"), Status: args["status"],
		ShortNames: splitList(args["shortNames"]), Categories: splitList(args["categories"])}, nil
}

// splitList splits a ;-separated marker value; nil when empty.
func splitList(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ";")
}

// ResourceMarker is the kind's kubebuilder resource marker: its categories and short names.
func (p Provider) ResourceMarker() string {
	m := "+kubebuilder:resource:categories=" + strings.Join(append([]string{"terraplane", "provider"}, p.Categories...), ";")
	if len(p.ShortNames) > 0 {
		m += ",shortName=" + strings.Join(p.ShortNames, ";")
	}
	return m
}

// readColumn reads the name=, type= and JSONPath= arguments of a printer column marker.
func readColumn(rest string) (PrintColumn, error) {
	args, err := markerArgs(rest)
	if err != nil {
		return PrintColumn{}, err
	}
	if err := onlyKeys(args, "name", "type", "JSONPath"); err != nil {
		return PrintColumn{}, fmt.Errorf("%s %w", columnMarker, err)
	}
	col := PrintColumn{Name: args["name"], Type: args["type"], JSONPath: args["JSONPath"]}
	switch {
	case col.Name == "" || col.JSONPath == "":
		return PrintColumn{}, fmt.Errorf("%s needs name=, type= and JSONPath=", columnMarker)
	case !columnTypes[col.Type]:
		return PrintColumn{}, fmt.Errorf("%s type=%q is not one of boolean, date, integer, number, string", columnMarker, col.Type)
	case strings.Contains(col.JSONPath, "`"):
		return PrintColumn{}, fmt.Errorf("%s JSONPath may not contain a backtick", columnMarker)
	}
	return col, nil
}

// onlyKeys refuses arguments other than the known ones, so a misspelt one is not dropped.
func onlyKeys(args map[string]string, known ...string) error {
	var unknown []string
	for k := range args {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("takes %s, not %s", strings.Join(known, "=, ")+"=", strings.Join(unknown, "=, ")+"=")
}

// Comment is the kind's doc comment: its name, then the doc lines.
func (p Provider) Comment() string {
	lines := make([]string, len(p.Doc))
	for i, l := range p.Doc {
		lines[i] = strings.TrimRight("// "+l, " ")
	}
	lines[0] = "// " + p.Name + " " + p.Doc[0]
	return strings.Join(lines, "\n")
}

// StatusType is the Go type of the kind's status field.
func (p Provider) StatusType() string {
	if p.Status == "" {
		return "common.ProviderStatus"
	}
	return p.Status
}

// Marker is the column's kubebuilder printcolumn marker.
func (c PrintColumn) Marker() string {
	return fmt.Sprintf("+kubebuilder:printcolumn:name=%s,type=%s,JSONPath=`%s`", strconv.Quote(c.Name), c.Type, c.JSONPath)
}
