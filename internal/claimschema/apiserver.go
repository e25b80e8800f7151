package claimschema

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// celEnv is the CEL environment the API server compiles new rules in.
var celEnv = sync.OnceValue(func() *environment.EnvSet {
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
})

// verdict is whether the API server accepts one rule of a field, and what it costs.
type verdict struct {
	// refused says why the API server would refuse the rule; empty when it accepts it.
	refused string
	// cost is the API server's estimate of the rule's worst-case cost.
	cost uint64
}

// judgeRules compiles the rules of a top-level parameter p as the API server does when it
// is given the CRD: against the field's schema, in the API server's CEL environment,
// within its budget for one rule. A CRD with a rule it refuses is refused whole.
func judgeRules(p apiextensionsv1.JSONSchemaProps) []verdict {
	out := make([]verdict, len(p.XValidations))
	refuseAll := func(why string) []verdict {
		for i := range out {
			out[i].refused = why
		}
		return out
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&p, internal, nil); err != nil {
		return refuseAll(fmt.Sprintf("the field's schema does not convert: %v", err))
	}
	s, err := schema.NewStructural(internal)
	if err != nil {
		return refuseAll(fmt.Sprintf("the field's schema is not structural: %v", err))
	}
	decl := model.SchemaDeclType(s, false)
	if decl == nil {
		return refuseAll("the API server checks no CEL rule on a field of any type; give the variable a type")
	}
	results, err := cel.Compile(s, decl, celconfig.PerCallLimit, celEnv(), cel.NewExpressionsEnvLoader())
	if err != nil {
		return refuseAll(fmt.Sprintf("the API server cannot compile rules on this field: %v", err))
	}
	for i, r := range results {
		out[i].cost = r.MaxCost
		switch {
		case r.Error != nil:
			out[i].refused = "the API server refuses the CEL rule " + p.XValidations[i].Rule + ": " + firstLine(r.Error.Detail)
		case r.MaxCost > validation.StaticEstimatedCostLimit:
			out[i].refused = fmt.Sprintf("the API server estimates the cost of the CEL rule %s at %d, over its budget of %d (terraform types set no size limits)",
				p.XValidations[i].Rule, r.MaxCost, validation.StaticEstimatedCostLimit)
		}
	}
	return out
}

// keepAccepted leaves on p the rules the API server accepts, within what is left of its
// budget for all the rules of a CRD, and moves the others to res.Untranslated; conds are
// the rules' conditions as written.
func keepAccepted(name string, p *apiextensionsv1.JSONSchemaProps, conds []string, res *Result) {
	var kept apiextensionsv1.ValidationRules
	for i, v := range judgeRules(*p) {
		if v.refused == "" && res.cost+v.cost > validation.StaticEstimatedCRDCostLimit {
			v.refused = fmt.Sprintf("with the rules before it, the API server's estimate of the cost of the CEL rule %s is over its budget for a whole CRD (%d)",
				p.XValidations[i].Rule, validation.StaticEstimatedCRDCostLimit)
		}
		if v.refused != "" {
			res.Untranslated = append(res.Untranslated, Untranslated{Variable: name, Condition: conds[i], Reason: v.refused})
			continue
		}
		res.cost += v.cost
		kept = append(kept, p.XValidations[i])
	}
	p.XValidations = kept
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}
