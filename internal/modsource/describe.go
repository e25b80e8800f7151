package modsource

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
)

// Describe lists a module's variables and outputs the way ModuleClass status shows them.
func Describe(m *module.Module) ([]terraformv1.ModuleVariable, []terraformv1.ModuleOutput) {
	vars := make([]terraformv1.ModuleVariable, 0, len(m.Variables))
	for _, v := range m.Variables {
		vars = append(vars, terraformv1.ModuleVariable{Name: v.Name, Type: v.Type, Default: string(v.Default),
			Required: v.Required, Sensitive: v.Sensitive, Description: v.Description})
	}
	outs := make([]terraformv1.ModuleOutput, 0, len(m.Outputs))
	for _, o := range m.Outputs {
		outs = append(outs, terraformv1.ModuleOutput{Name: o.Name, Sensitive: o.Sensitive, Description: o.Description})
	}
	return vars, outs
}

// Validate checks a class template against its module: every fixed value and input
// mapping names a variable, every required variable is supplied, every connection
// mapping names an output. The error lists every problem. fromClaims are variables the
// claims of a defined kind supply (their spec.parameters, name for name).
func Validate(m *module.Module, tmpl terraformv1.ModuleClassSpecTemplate, fromClaims ...string) error {
	var problems []string
	supplied := map[string]bool{}
	for _, name := range fromClaims { // the parameters of a defined claim kind, name for name
		supplied[name] = true
	}
	fixed, err := common.JSONValues(tmpl.ForProvider)
	if err != nil {
		return fmt.Errorf("forProvider: %w", err)
	}
	for name := range fixed {
		supplied[name] = true
		if _, ok := m.Variable(name); !ok {
			problems = append(problems, fmt.Sprintf("forProvider sets unknown variable %q", name))
		}
	}
	for _, in := range tmpl.Inputs {
		supplied[in.ToVariable] = true
		if _, ok := m.Variable(in.ToVariable); !ok {
			problems = append(problems, fmt.Sprintf("input %s maps to unknown variable %q", inputSource(in), in.ToVariable))
		}
	}
	for _, from := range tmpl.VariablesFrom {
		if supplied[from.Name] {
			problems = append(problems, fmt.Sprintf("variable %q is set by variablesFrom and by forProvider or inputs", from.Name))
		}
		supplied[from.Name] = true
		if _, ok := m.Variable(from.Name); !ok {
			problems = append(problems, fmt.Sprintf("variablesFrom sets unknown variable %q", from.Name))
		}
	}
	for _, v := range m.Variables {
		if v.Required && !supplied[v.Name] {
			problems = append(problems, fmt.Sprintf("required variable %q is not supplied by forProvider, inputs or variablesFrom", v.Name))
		}
	}
	problems = append(problems, connectionProblems(m, tmpl)...)
	if len(problems) > 0 {
		sort.Strings(problems)
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// connectionProblems checks the connection entries: an output must be the module's, a
// ProviderConfig one the class names (providerRef or providerConfigRefs).
func connectionProblems(m *module.Module, tmpl terraformv1.ModuleClassSpecTemplate) []string {
	var problems []string
	for _, c := range tmpl.Connection {
		switch {
		case c.FromOutput != "":
			if _, ok := m.Output(c.FromOutput); !ok {
				problems = append(problems, fmt.Sprintf("connection maps unknown output %q", c.FromOutput))
			}
		case c.FromProviderConfig != nil:
			if !usesProviderConfig(tmpl, c.FromProviderConfig.Name) {
				problems = append(problems, fmt.Sprintf("connection key %s takes a value from ProviderConfig %s, which the class does not name in providerRef or providerConfigRefs", c.ToKey, c.FromProviderConfig.Name))
			}
		}
	}
	return problems
}

// usesProviderConfig reports whether the class's resources use the ProviderConfig name.
func usesProviderConfig(tmpl terraformv1.ModuleClassSpecTemplate, name string) bool {
	if tmpl.ProviderRef != nil && tmpl.ProviderRef.Name == name {
		return true
	}
	return slices.ContainsFunc(tmpl.ProviderConfigRefs, func(r common.LocalReference) bool { return r.Name == name })
}

// inputSource names where an input mapping reads its value, as a problem shows it.
func inputSource(in terraformv1.InputMapping) string {
	if in.FromFieldPath == "" && in.FromClusterLabel != "" {
		return "from cluster label " + in.FromClusterLabel
	}
	return in.FromFieldPath
}
