package planpolicy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"

	"terraplane.io/terraplane/internal/plandoc"
)

// ResultPass is the result of a rule the plan passes.
const ResultPass = "Pass"

// maxNamed caps the addresses a failed rule's message names.
const maxNamed = 5

// maxNarrowed caps the resource changes a failed rule is tried on one by one to find
// the addresses that fail it.
const maxNarrowed = 200

// Input is what rules see besides the plan.
type Input struct {
	// Plan is the redacted plan.
	Plan *plandoc.Document
	// Object is the managed resource, as JSON values.
	Object map[string]any
	// Claim is its claim, as JSON values; nil when it has none.
	Claim map[string]any
	// Namespace is the tenant namespace's name, and NamespaceLabels its labels.
	Namespace       string
	NamespaceLabels map[string]string
}

// Result is what one rule said about a plan.
type Result struct {
	// Policy and Rule name the rule.
	Policy, Rule string
	// Enforcement is the rule's; Deny for a rule that could not be evaluated.
	Enforcement policyv1.Enforcement
	// Passed is true when the plan passes the rule.
	Passed bool
	// Message says why the plan failed; empty when it passed.
	Message string
	// Addresses are the resource changes that fail the rule on their own.
	Addresses []string
}

// Outcome is the status form of the result: Pass, or the enforcement that failed.
func (r Result) Outcome() string {
	if r.Passed {
		return ResultPass
	}
	return string(r.Enforcement)
}

// String names the policy, the rule, the addresses and the message.
func (r Result) String() string {
	return fmt.Sprintf("policy %s rule %s: %s", r.Policy, r.Rule, r.Message)
}

// Evaluate checks every rule of the policies on the plan, in order. A policy whose
// ResourceTypes the plan does not touch gives no results.
func Evaluate(ctx context.Context, policies []*Policy, in Input) []Result {
	var out []Result
	for _, p := range policies {
		out = append(out, p.Evaluate(ctx, in)...)
	}
	return out
}

// Evaluate checks the policy's rules on the plan: an expression that is false fails its
// rule; one that does not compile or errors denies, with the error in the message.
func (p *Policy) Evaluate(ctx context.Context, in Input) []Result {
	changes := p.changes(in.Plan)
	if changes == nil {
		return nil
	}
	vars := map[string]any{
		varPlan:      map[string]any{"resource_changes": changes},
		varObject:    in.Object,
		varClaim:     in.Claim,
		varNamespace: map[string]any{"metadata": map[string]any{"name": in.Namespace, "labels": stringMap(in.NamespaceLabels)}},
	}
	if in.Claim == nil {
		vars[varClaim] = nil
	}
	out := make([]Result, 0, len(p.Rules))
	for _, r := range p.Rules {
		out = append(out, p.check(ctx, r, vars, changes))
	}
	return out
}

// changes are the plan's resource changes of the policy's resource types; nil when it
// names types and the plan touches none.
func (p *Policy) changes(d *plandoc.Document) []any {
	var all []any
	if d != nil {
		all = d.Changes
	}
	if len(p.Match.ResourceTypes) == 0 {
		if all == nil {
			return []any{}
		}
		return all
	}
	var out []any
	for _, c := range all {
		if rc, ok := c.(map[string]any); ok && slices.Contains(p.Match.ResourceTypes, str(rc["type"])) {
			out = append(out, c)
		}
	}
	return out
}

// check evaluates one rule.
func (p *Policy) check(ctx context.Context, r Rule, vars map[string]any, changes []any) Result {
	res := Result{Policy: p.Name, Rule: r.Name, Enforcement: r.Enforcement}
	if r.Err != nil {
		res.Enforcement, res.Message = policyv1.EnforcementDeny, fmt.Sprintf("the rule does not compile: %v", r.Err)
		return res
	}
	ok, err := evalBool(ctx, r.expr, vars)
	if err != nil {
		res.Enforcement, res.Message = policyv1.EnforcementDeny, "the rule could not be evaluated: "+explain(err)
		return res
	}
	if res.Passed = ok; ok {
		return res
	}
	res.Addresses = failing(ctx, r.expr, vars, changes)
	res.Message = r.text(ctx, vars)
	if len(res.Addresses) > 0 {
		res.Message += " (at " + named(res.Addresses) + ")"
	}
	return res
}

// text is the rule's message: its messageExpression's, else its message, else a
// default.
func (r Rule) text(ctx context.Context, vars map[string]any) string {
	if r.msgExpr != nil {
		v, _, err := r.msgExpr.ContextEval(ctx, vars)
		if s, ok := value(v).(string); err == nil && ok && strings.TrimSpace(s) != "" {
			return s
		}
	}
	if r.Message != "" {
		return r.Message
	}
	return "the plan fails rule " + r.Name
}

// evalBool evaluates a rule's expression.
func evalBool(ctx context.Context, prg cel.Program, vars map[string]any) (bool, error) {
	v, _, err := prg.ContextEval(ctx, vars)
	if err != nil {
		return false, err
	}
	b, ok := value(v).(bool)
	if !ok {
		return false, fmt.Errorf("the expression gave %v, not a bool", value(v))
	}
	return b, nil
}

// failing finds the resource changes that fail the rule on their own: the plan narrowed
// to each in turn. A rule about the plan as a whole (a count) may name none.
func failing(ctx context.Context, prg cel.Program, vars map[string]any, changes []any) []string {
	if len(changes) > maxNarrowed {
		return nil
	}
	one := make(map[string]any, len(vars))
	for k, v := range vars {
		one[k] = v
	}
	var out []string
	for _, c := range changes {
		rc, _ := c.(map[string]any)
		one[varPlan] = map[string]any{"resource_changes": []any{c}}
		if ok, err := evalBool(ctx, prg, one); err == nil && !ok {
			out = append(out, str(rc["address"]))
		}
	}
	return out
}

// explain is a CEL evaluation error as a rule's author reads it.
func explain(err error) string {
	msg := err.Error()
	if key, ok := strings.CutPrefix(msg, "no such key: "); ok {
		return fmt.Sprintf("%s: a field the rule reads is absent from this plan; test it first, e.g. has(rc.change.after.%s)", msg, key)
	}
	return msg
}

// named lists at most maxNamed addresses.
func named(addrs []string) string {
	if len(addrs) <= maxNamed {
		return strings.Join(addrs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(addrs[:maxNamed], ", "), len(addrs)-maxNamed)
}

// value is a CEL value as a Go value.
func value(v interface{ Value() any }) any {
	if v == nil {
		return nil
	}
	return v.Value()
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// CouldCheck reports whether p could check a plan of a configuration that declares
// types (complete: all its types are known): a policy of every type always could, and
// one of some types could when the configuration declares one of them, or may.
func (p *Policy) CouldCheck(types []string, complete bool) bool {
	if len(p.Match.ResourceTypes) == 0 || !complete {
		return true
	}
	return slices.ContainsFunc(p.Match.ResourceTypes, func(t string) bool { return slices.Contains(types, t) })
}
