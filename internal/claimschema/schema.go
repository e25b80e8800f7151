package claimschema

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// SecretRefSuffix ends the parameter that names the Secret key holding a sensitive variable.
const SecretRefSuffix = "SecretRef"

// Options choose which variables become parameters (set at most one of Expose and
// Hide) and how they are typed.
type Options struct {
	// Expose lists the only variables claims may set.
	Expose []string
	// Hide lists variables claims may not set.
	Hide []string
	// Fixed lists variables the class sets itself (its forProvider): they are left out
	// whatever Expose says, since a claim could not change them.
	Fixed []string
	// ParameterSchemas replace the generated schema of single variables, by name.
	ParameterSchemas map[string]apiextensionsv1.JSONSchemaProps
	// InferAnyFromDefaults types a variable of type any from a non-empty object (or list
	// of objects) default.
	InferAnyFromDefaults bool
}

// Untranslated is a validation rule that did not become a CEL rule.
type Untranslated struct {
	// Variable the rule belongs to.
	Variable string
	// Condition as written.
	Condition string
	// Reason it did not translate.
	Reason string
}

// Result is the schema of spec.parameters and what it leaves to terraform.
type Result struct {
	// Parameters is the schema of spec.parameters.
	Parameters apiextensionsv1.JSONSchemaProps
	// SecretRefs maps each <variable>SecretRef parameter to its sensitive variable.
	SecretRefs map[string]string
	// Untranslated lists the validation rules terraform checks but the API server does not.
	Untranslated []Untranslated
	// cost is the API server's estimate of the cost of the rules kept so far.
	cost uint64
}

// Generate builds the spec.parameters schema from a module's variables: one property
// per variable, named as the variable; required when it has no default; its
// description (and its default, as text: terraform applies defaults, so a claim stores
// only what its author wrote); its validation blocks as CEL rules where they translate
// and the API server accepts them (the others are listed in Untranslated). A sensitive
// variable is replaced by <name>SecretRef {name, key}, a Secret key in the claim's
// namespace. opts.ParameterSchemas replace single properties.
func Generate(vars []Variable, opts Options) (*Result, error) {
	if err := checkNames(vars, opts); err != nil {
		return nil, err
	}
	res := &Result{
		Parameters: apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{}},
		SecretRefs: map[string]string{},
	}
	for _, v := range vars {
		if !exposed(v.Name, opts) {
			continue
		}
		if v.Sensitive {
			ref := v.Name + SecretRefSuffix
			res.Parameters.Properties[ref] = secretRefSchema(v)
			res.SecretRefs[ref] = v.Name
			continue
		}
		p, err := parameterSchema(v, opts, res)
		if err != nil {
			return nil, fmt.Errorf("variable %q: %w", v.Name, err)
		}
		res.Parameters.Properties[v.Name] = p
		if !v.HasDefault {
			res.Parameters.Required = append(res.Parameters.Required, v.Name)
		}
	}
	return res, nil
}

// parameterSchema is the property of one non-sensitive variable: the schema the
// definition gives it, or the one generated from its type.
func parameterSchema(v Variable, opts Options, res *Result) (apiextensionsv1.JSONSchemaProps, error) {
	given, ok := opts.ParameterSchemas[v.Name]
	if !ok {
		return variableSchema(v, opts, res)
	}
	if given.Description == "" {
		given.Description = v.Description
	}
	if msg := structuralProblem(given); msg != "" {
		return given, fmt.Errorf("parameterSchemas: %s", msg)
	}
	if len(given.XValidations) > 0 {
		conds := make([]string, len(given.XValidations))
		for i, r := range given.XValidations {
			conds[i] = r.Rule
		}
		keepAccepted(v.Name, &given, conds, res)
	}
	return given, nil
}

// variableSchema is the generated property of one non-sensitive variable. A string
// takes what terraform converts to one unless a validation rule the API server checks
// needs it typed.
func variableSchema(v Variable, opts Options, res *Result) (apiextensionsv1.JSONSchemaProps, error) {
	ty, defaults := cty.DynamicPseudoType, (*typeexpr.Defaults)(nil)
	if v.Type != nil {
		t, d, diags := typeexpr.TypeConstraintWithDefaults(v.Type)
		if diags.HasErrors() {
			return apiextensionsv1.JSONSchemaProps{}, fmt.Errorf("type %s: %s", v.TypeText, diags.Error())
		}
		ty, defaults = t, d
	}
	rules, conds := translate(v, ty, res)
	p, err := typeSchema(ty, len(rules) == 0)
	if err != nil {
		return p, err
	}
	if ty == cty.DynamicPseudoType && opts.InferAnyFromDefaults && v.HasDefault {
		if inferred, ok := inferSchema(v.Default); ok {
			p = inferred
		}
	}
	var def *apiextensionsv1.JSON
	if v.HasDefault {
		if def, err = defaultJSON(v.Default, ty, defaults); err != nil {
			return p, fmt.Errorf("default: %w", err)
		}
	}
	p.Description = describe(v.Description, p.Description, defaultText(def))
	p.XValidations = rules
	if len(p.XValidations) > 0 {
		keepAccepted(v.Name, &p, conds, res)
	}
	return p, nil
}

// translate turns the variable's validation blocks into CEL rules, listing in
// res.Untranslated those that do not translate; conds are the translated rules'
// conditions as written.
func translate(v Variable, ty cty.Type, res *Result) (apiextensionsv1.ValidationRules, []string) {
	var rules apiextensionsv1.ValidationRules
	var conds []string
	for _, val := range v.Validations {
		rule, err := toCEL(v.Name, ty, val.Condition)
		if err != nil {
			res.Untranslated = append(res.Untranslated, Untranslated{Variable: v.Name, Condition: val.ConditionText, Reason: err.Error()})
			continue
		}
		msg := strings.Join(strings.Fields(val.ErrorMessage), " ")
		if msg == "" {
			msg = "failed the module's validation: " + strings.Join(strings.Fields(val.ConditionText), " ")
		}
		rules = append(rules, apiextensionsv1.ValidationRule{Rule: rule, Message: msg})
		conds = append(conds, val.ConditionText)
	}
	return rules, conds
}

// maxDefaultText bounds the default a description shows.
const maxDefaultText = 200

// defaultText is "default: <value as JSON>", for a description; empty for none.
func defaultText(def *apiextensionsv1.JSON) string {
	if def == nil {
		return ""
	}
	text := string(def.Raw)
	if len(text) > maxDefaultText {
		text = text[:maxDefaultText-3] + "..."
	}
	return "default: " + text
}

// secretRefSchema is the Secret key reference that stands for a sensitive variable.
func secretRefSchema(v Variable) apiextensionsv1.JSONSchemaProps {
	one := int64(1)
	desc := fmt.Sprintf("Secret key (in the claim's namespace) holding sensitive variable %s", v.Name)
	if v.Description != "" {
		desc += ": " + v.Description
	}
	return apiextensionsv1.JSONSchemaProps{
		Type: "object", Description: desc, Required: []string{"name", "key"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"name": {Type: "string", MinLength: &one, Description: "Name of the Secret."},
			"key":  {Type: "string", MinLength: &one, Description: "Key in the Secret."},
		},
	}
}

// checkNames refuses expose and hide lists and parameter schemas that name unknown
// variables, both lists, and a schema for a sensitive variable.
func checkNames(vars []Variable, opts Options) error {
	if len(opts.Expose) > 0 && len(opts.Hide) > 0 {
		return fmt.Errorf("set at most one of expose and hide")
	}
	names := append(slices.Clone(opts.Expose), opts.Hide...)
	for n := range opts.ParameterSchemas {
		names = append(names, n)
		if i := slices.IndexFunc(vars, func(v Variable) bool { return v.Name == n }); i >= 0 && vars[i].Sensitive {
			return fmt.Errorf("parameterSchemas: variable %s is sensitive: claims name a Secret key for it (%s%s)", n, n, SecretRefSuffix)
		}
	}
	sort.Strings(names)
	var unknown []string
	for _, n := range slices.Compact(names) {
		if !slices.ContainsFunc(vars, func(v Variable) bool { return v.Name == n }) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("the module has no variable %s", strings.Join(unknown, ", "))
	}
	return nil
}

func exposed(name string, opts Options) bool {
	if slices.Contains(opts.Fixed, name) {
		return false
	}
	if len(opts.Expose) > 0 {
		return slices.Contains(opts.Expose, name)
	}
	return !slices.Contains(opts.Hide, name)
}

func describe(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}
