package claimschema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// celTranslator turns a validation condition on variable name, of type ty, into a CEL
// rule on the property itself (self). Only a clean subset translates; anything else is
// an error that says what was not understood.
type celTranslator struct {
	name string
	ty   cty.Type
	// locals are the names bound by enclosing for expressions, with their types.
	locals map[string]cty.Type
}

// toCEL translates the condition of a validation block of variable name, of type ty
// (cty.DynamicPseudoType when it has none).
func toCEL(name string, ty cty.Type, cond hcl.Expression) (string, error) {
	t := celTranslator{name: name, ty: ty, locals: map[string]cty.Type{}}
	return t.expr(cond)
}

var celOps = map[*hclsyntax.Operation]string{
	hclsyntax.OpLogicalAnd: "&&", hclsyntax.OpLogicalOr: "||",
	hclsyntax.OpEqual: "==", hclsyntax.OpNotEqual: "!=",
	hclsyntax.OpGreaterThan: ">", hclsyntax.OpGreaterThanOrEqual: ">=",
	hclsyntax.OpLessThan: "<", hclsyntax.OpLessThanOrEqual: "<=",
	hclsyntax.OpAdd: "+", hclsyntax.OpSubtract: "-", hclsyntax.OpMultiply: "*",
	hclsyntax.OpDivide: "/", hclsyntax.OpModulo: "%",
}

func (t celTranslator) expr(e hcl.Expression) (string, error) {
	switch x := e.(type) {
	case *hclsyntax.ParenthesesExpr:
		s, err := t.expr(x.Expression)
		return "(" + s + ")", err
	case *hclsyntax.LiteralValueExpr:
		return literal(x.Val)
	case *hclsyntax.TemplateExpr:
		if !x.IsStringLiteral() {
			return "", fmt.Errorf("string templates do not translate")
		}
		v, _ := x.Value(nil)
		return literal(v)
	case *hclsyntax.TemplateWrapExpr:
		return "", fmt.Errorf("string templates do not translate")
	case *hclsyntax.ScopeTraversalExpr:
		return t.traversal(x.Traversal)
	case *hclsyntax.RelativeTraversalExpr:
		src, err := t.expr(x.Source)
		if err != nil {
			return "", err
		}
		rest, err := steps(x.Traversal)
		return src + rest, err
	case *hclsyntax.IndexExpr:
		coll, err := t.expr(x.Collection)
		if err != nil {
			return "", err
		}
		key, err := t.expr(x.Key)
		return coll + "[" + key + "]", err
	case *hclsyntax.BinaryOpExpr:
		op, ok := celOps[x.Op]
		if !ok {
			return "", fmt.Errorf("operator does not translate")
		}
		l, err := t.expr(x.LHS)
		if err != nil {
			return "", err
		}
		r, err := t.expr(x.RHS)
		return l + " " + op + " " + r, err
	case *hclsyntax.UnaryOpExpr:
		s, err := t.expr(x.Val)
		if x.Op == hclsyntax.OpLogicalNot {
			return "!" + s, err
		}
		return "-" + s, err
	case *hclsyntax.ConditionalExpr:
		c, err1 := t.expr(x.Condition)
		a, err2 := t.expr(x.TrueResult)
		b, err3 := t.expr(x.FalseResult)
		return c + " ? " + a + " : " + b, firstErr(err1, err2, err3)
	case *hclsyntax.TupleConsExpr:
		parts := make([]string, len(x.Exprs))
		for i, el := range x.Exprs {
			s, err := t.expr(el)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return "[" + strings.Join(parts, ", ") + "]", nil
	case *hclsyntax.FunctionCallExpr:
		return t.call(x)
	}
	return "", fmt.Errorf("%s does not translate", describeExpr(e))
}

// call translates the functions CEL has a clean equivalent of.
func (t celTranslator) call(x *hclsyntax.FunctionCallExpr) (string, error) {
	args := func(n int) ([]string, error) {
		if len(x.Args) != n || x.ExpandFinal {
			return nil, fmt.Errorf("%s() with %d arguments does not translate", x.Name, len(x.Args))
		}
		out := make([]string, n)
		for i, a := range x.Args {
			s, err := t.expr(a)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	switch x.Name {
	case "length":
		a, err := args(1)
		if err != nil {
			return "", err
		}
		return "size(" + a[0] + ")", nil
	case "contains":
		a, err := args(2)
		if err != nil {
			return "", err
		}
		return a[1] + " in " + a[0], nil
	case "startswith", "endswith":
		a, err := args(2)
		if err != nil {
			return "", err
		}
		return a[0] + "." + map[string]string{"startswith": "startsWith", "endswith": "endsWith"}[x.Name] + "(" + a[1] + ")", nil
	case "can":
		return t.can(x)
	case "alltrue", "anytrue":
		return t.quantifier(x)
	}
	return "", fmt.Errorf("function %s() does not translate", x.Name)
}

// can translates can(regex(pattern, s)) to s.matches(pattern) and can(cidrhost(s, n))
// to isCIDR(s): both ask whether s parses.
func (t celTranslator) can(x *hclsyntax.FunctionCallExpr) (string, error) {
	inner, ok := x.Args[0].(*hclsyntax.FunctionCallExpr)
	if len(x.Args) != 1 || !ok || len(inner.Args) != 2 {
		return "", fmt.Errorf("can() translates only around regex(pattern, value) or cidrhost(prefix, n)")
	}
	switch inner.Name {
	case "regex":
		p, err1 := t.expr(inner.Args[0])
		s, err2 := t.expr(inner.Args[1])
		return s + ".matches(" + p + ")", firstErr(err1, err2)
	case "cidrhost":
		s, err := t.expr(inner.Args[0])
		return "isCIDR(" + s + ")", err
	}
	return "", fmt.Errorf("can(%s()) does not translate", inner.Name)
}

// quantifier translates alltrue([for v in coll : cond]) to coll.all(v, cond), and
// anytrue to exists.
func (t celTranslator) quantifier(x *hclsyntax.FunctionCallExpr) (string, error) {
	var f *hclsyntax.ForExpr
	if len(x.Args) == 1 {
		f, _ = x.Args[0].(*hclsyntax.ForExpr)
	}
	if f == nil || f.KeyExpr != nil || f.CondExpr != nil || f.KeyVar != "" {
		return "", fmt.Errorf("%s() translates only around [for v in collection : condition]", x.Name)
	}
	ct := t.typeOf(f.CollExpr)
	if !ct.IsListType() && !ct.IsSetType() {
		// CEL iterates a map's keys where terraform iterates its values
		return "", fmt.Errorf("%s() translates only over a list or set; terraform iterates a map's or object's values, CEL its keys", x.Name)
	}
	coll, err := t.expr(f.CollExpr)
	if err != nil {
		return "", err
	}
	inner := celTranslator{name: t.name, ty: t.ty, locals: map[string]cty.Type{f.ValVar: ct.ElementType()}}
	for k, v := range t.locals {
		if k != f.ValVar {
			inner.locals[k] = v
		}
	}
	cond, err := inner.expr(f.ValExpr)
	if err != nil {
		return "", err
	}
	q := map[string]string{"alltrue": "all", "anytrue": "exists"}[x.Name]
	return fmt.Sprintf("%s.%s(%s, %s)", coll, q, f.ValVar, cond), nil
}

// typeOf is the type of a reference to the variable or to a for expression's variable,
// as far as it is known; cty.DynamicPseudoType otherwise.
func (t celTranslator) typeOf(e hcl.Expression) cty.Type {
	x, ok := e.(*hclsyntax.ScopeTraversalExpr)
	if !ok {
		return cty.DynamicPseudoType
	}
	tr := x.Traversal
	ty, local := t.locals[tr.RootName()]
	switch {
	case local:
		tr = tr[1:]
	case tr.RootName() == "var" && len(tr) >= 2:
		if attr, ok := tr[1].(hcl.TraverseAttr); !ok || attr.Name != t.name {
			return cty.DynamicPseudoType
		}
		ty, tr = t.ty, tr[2:]
	default:
		return cty.DynamicPseudoType
	}
	for _, step := range tr {
		ty = stepType(ty, step)
	}
	return ty
}

// stepType is the type of one attribute or index step into a value of type ty.
func stepType(ty cty.Type, step hcl.Traverser) cty.Type {
	switch s := step.(type) {
	case hcl.TraverseAttr:
		if ty.IsObjectType() && ty.HasAttribute(s.Name) {
			return ty.AttributeType(s.Name)
		}
		if ty.IsMapType() {
			return ty.ElementType()
		}
	case hcl.TraverseIndex:
		if ty.IsListType() || ty.IsMapType() {
			return ty.ElementType()
		}
	}
	return cty.DynamicPseudoType
}

// traversal translates var.<name>... to self... and a for expression's variable to itself.
func (t celTranslator) traversal(tr hcl.Traversal) (string, error) {
	root := tr.RootName()
	if _, local := t.locals[root]; local {
		rest, err := steps(tr[1:])
		return root + rest, err
	}
	if root != "var" || len(tr) < 2 {
		return "", fmt.Errorf("reference to %s does not translate", root)
	}
	attr, ok := tr[1].(hcl.TraverseAttr)
	if !ok || attr.Name != t.name {
		return "", fmt.Errorf("a reference to another variable does not translate")
	}
	rest, err := steps(tr[2:])
	return "self" + rest, err
}

// steps translates attribute and index steps.
func steps(tr hcl.Traversal) (string, error) {
	var b strings.Builder
	for _, s := range tr {
		switch st := s.(type) {
		case hcl.TraverseAttr:
			b.WriteString("." + st.Name)
		case hcl.TraverseIndex:
			k, err := literal(st.Key)
			if err != nil {
				return "", err
			}
			b.WriteString("[" + k + "]")
		default:
			return "", fmt.Errorf("a splat does not translate")
		}
	}
	return b.String(), nil
}

// literal writes a string, number or bool as CEL.
func literal(v cty.Value) (string, error) {
	switch {
	case v.IsNull():
		return "", fmt.Errorf("null does not translate")
	case v.Type() == cty.String:
		return strconv.Quote(v.AsString()), nil
	case v.Type() == cty.Bool:
		return strconv.FormatBool(v.True()), nil
	case v.Type() == cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInt() {
			i, _ := bf.Int64()
			return strconv.FormatInt(i, 10), nil
		}
		f, _ := bf.Float64()
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("a %s literal does not translate", v.Type().FriendlyName())
}

func describeExpr(e hcl.Expression) string {
	switch e.(type) {
	case *hclsyntax.ForExpr:
		return "a for expression"
	case *hclsyntax.SplatExpr:
		return "a splat"
	case *hclsyntax.ObjectConsExpr:
		return "an object constructor"
	}
	if _, ok := e.(hclsyntax.Expression); !ok {
		return "JSON syntax"
	}
	return fmt.Sprintf("%T", e)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
