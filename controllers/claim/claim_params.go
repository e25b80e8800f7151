package claim

import (
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
)

// variablesPrefix matches the start of a resource's message that names the module input
// variables a value terraform refused came from: "variable x: " or "variables x, y: ".
var variablesPrefix = regexp.MustCompile(`^variables? ([\w-]+(?:, [\w-]+)*): `)

// asParameters rewrites msg, a message of claim's resource, so that the module input
// variables it starts with are named as the claim's parameters that set them
// (spec.parameters.x, or a field of the claim's own spec), and a variable the claim does
// not set is said to be its class's. A message naming no variable is returned as it is.
func asParameters(claim resource.Claim, msg string) string {
	m := variablesPrefix.FindStringSubmatchIndex(msg)
	if m == nil {
		return msg
	}
	spec := specOf(claim)
	names := strings.Split(msg[m[2]:m[3]], ", ")
	out := make([]string, 0, len(names))
	for _, v := range names {
		if path, ok := parameterOf(spec, v); ok {
			out = append(out, "parameter "+path)
		} else {
			out = append(out, "variable "+v+" (set by the class, not the claim)")
		}
	}
	return strings.Join(out, ", ") + ": " + msg[m[1]:]
}

// parameterOf is the path of the claim's field that sets the module input variable v:
// spec.parameters.v (or its Secret reference) for a kind a ClaimDefinition defines,
// spec.<v in camelCase> for a built-in kind.
func parameterOf(spec map[string]any, v string) (string, bool) {
	params, _ := spec["parameters"].(map[string]any)
	for _, name := range []string{v, render.Camel(v), v + "SecretRef"} {
		if _, ok := params[name]; ok {
			return "spec.parameters." + name, true
		}
	}
	for _, name := range []string{render.Camel(v), v} {
		if _, ok := spec[name]; ok && name != "parameters" {
			return "spec." + name, true
		}
	}
	return "", false
}

// specOf is obj's spec as JSON-shaped values (empty when it cannot be read).
func specOf(obj runtime.Object) map[string]any {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil
	}
	spec, _ := content["spec"].(map[string]any)
	return spec
}
