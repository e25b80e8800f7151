package planpolicy

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
)

// The variables a rule sees.
const (
	varPlan   = "plan"
	varObject = "object"
	varClaim  = "claim"
	// varNamespace is the namespace: "namespace" is a reserved word in CEL, and a
	// ValidatingAdmissionPolicy calls it namespaceObject too.
	varNamespace = "namespaceObject"
)

// Policy is a compiled PlanPolicy or NamespacedPlanPolicy.
type Policy struct {
	// Name is the policy's name; namespace/name for a NamespacedPlanPolicy.
	Name string
	// Namespace is a NamespacedPlanPolicy's namespace; empty for a PlanPolicy.
	Namespace string
	// Key identifies this generation of the policy (uid/generation).
	Key string
	// Match is what the policy applies to.
	Match policyv1.PolicyMatch
	// Rules are the compiled rules, in order.
	Rules []Rule
	// Source is the policy as compiled, to compile again where a create runs.
	Source Source
	// selector is Match.NamespaceSelector, parsed; nil matches every namespace.
	selector labels.Selector
}

// Rule is one compiled rule.
type Rule struct {
	// Name of the rule.
	Name string
	// Enforcement of the rule (Deny when the policy left it empty).
	Enforcement policyv1.Enforcement
	// Message is the rule's static message.
	Message string
	// Err is why the rule does not compile; a rule that does not compile denies.
	Err     error
	expr    cel.Program
	msgExpr cel.Program
}

// CompileError says which of a policy's rules do not compile, and why.
type CompileError struct {
	// Rules are "rule NAME: field: CEL error" lines, one per failing expression.
	Rules []string
}

// Error lists the failing rules.
func (e *CompileError) Error() string {
	return strings.Join(e.Rules, "; ")
}

var (
	envOnce sync.Once
	envErr  error
	celEnv  *cel.Env
)

// env is the CEL environment of rules: Kubernetes' (the libraries a
// ValidatingAdmissionPolicy may use, and its cost limit) with plan and namespaceObject
// typed (planType, namespaceType: a field they lack does not compile) and object and
// claim dynamic (their schema is the kind's).
func env() (*cel.Env, error) {
	envOnce.Do(func() {
		plan, ns := planType(), namespaceType()
		set, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			DeclTypes:         []*apiservercel.DeclType{plan, ns},
			EnvOptions: []cel.EnvOption{
				cel.Variable(varPlan, plan.CelType()), cel.Variable(varObject, cel.DynType),
				cel.Variable(varClaim, cel.DynType), cel.Variable(varNamespace, ns.CelType()),
			},
		})
		if err != nil {
			envErr = fmt.Errorf("build CEL environment: %w", err)
			return
		}
		celEnv, envErr = set.Env(environment.NewExpressions)
	})
	return celEnv, envErr
}

// Compile compiles a policy's rules. A rule that does not compile is kept with its Err
// (it denies every plan it sees) and named in the returned *CompileError.
func Compile(name, namespace string, uid types.UID, generation int64, spec policyv1.PlanPolicySpec) (*Policy, error) {
	e, err := env()
	if err != nil {
		return nil, err
	}
	p := &Policy{Name: name, Namespace: namespace, Key: fmt.Sprintf("%s/%d", uid, generation), Match: spec.Match,
		Source: Source{Name: name, Namespace: namespace, UID: uid, Generation: generation, Spec: spec}}
	if namespace != "" {
		p.Name = namespace + "/" + name
	}
	var bad []string
	if spec.Match.NamespaceSelector != nil {
		if p.selector, err = metav1.LabelSelectorAsSelector(spec.Match.NamespaceSelector); err != nil {
			bad = append(bad, fmt.Sprintf("spec.match.namespaceSelector: %v", err))
			p.selector = labels.Nothing()
		}
	}
	for _, r := range spec.Rules {
		rule := compileRule(e, r)
		if rule.Err != nil {
			bad = append(bad, fmt.Sprintf("rule %s: %v", r.Name, rule.Err))
		}
		p.Rules = append(p.Rules, rule)
	}
	if len(bad) > 0 {
		return p, &CompileError{Rules: bad}
	}
	return p, nil
}

// compileRule compiles one rule's expression (which must give a bool) and message
// expression (a string).
func compileRule(e *cel.Env, r policyv1.PolicyRule) Rule {
	rule := Rule{Name: r.Name, Enforcement: r.Enforcement, Message: r.Message}
	if rule.Enforcement == "" {
		rule.Enforcement = policyv1.EnforcementDeny
	}
	var err error
	if rule.expr, err = program(e, r.Expression, cel.BoolType); err != nil {
		rule.Err = fmt.Errorf("expression: %w", err)
		return rule
	}
	if r.MessageExpression != "" {
		if rule.msgExpr, err = program(e, r.MessageExpression, cel.StringType); err != nil {
			rule.Err = fmt.Errorf("messageExpression: %w", err)
		}
	}
	return rule
}

// program compiles src, checks it gives want (or a dynamic value), and plans it.
func program(e *cel.Env, src string, want *cel.Type) (cel.Program, error) {
	ast, iss := e.Compile(src)
	if iss.Err() != nil {
		msg := strings.TrimSpace(iss.Err().Error())
		if hint := fieldHint(msg); hint != "" {
			msg += " (" + hint + ")"
		}
		return nil, errors.New(msg)
	}
	if out := ast.OutputType(); !out.IsExactType(want) && !out.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("must give a %s, not a %s", want, out)
	}
	prg, err := e.Program(ast, cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return prg, nil
}

// Cache keeps compiled policies by generation, so that a rule is compiled once per
// change of its policy.
type Cache struct {
	mu       sync.Mutex
	compiled map[types.UID]cached
}

type cached struct {
	key    string
	policy *Policy
	err    error
}

// Compile returns the compiled policy of this uid and generation, compiling it the
// first time it is asked for.
func (c *Cache) Compile(name, namespace string, uid types.UID, generation int64, spec policyv1.PlanPolicySpec) (*Policy, error) {
	key := fmt.Sprintf("%s/%d", uid, generation)
	c.mu.Lock()
	if e, ok := c.compiled[uid]; ok && e.key == key {
		c.mu.Unlock()
		return e.policy, e.err
	}
	c.mu.Unlock()
	p, err := Compile(name, namespace, uid, generation, spec)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.compiled == nil {
		c.compiled = map[types.UID]cached{}
	}
	c.compiled[uid] = cached{key: key, policy: p, err: err}
	return p, err
}

// Forget drops a deleted policy's compiled rules.
func (c *Cache) Forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.compiled, uid)
}
