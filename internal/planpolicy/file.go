package planpolicy

import (
	"bytes"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
)

// yamlSeparator splits a YAML stream into documents.
var yamlSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// ReadPolicies compiles the PlanPolicies and NamespacedPlanPolicies of a YAML stream (a
// file as `kubectl apply -f` takes it); other kinds are skipped. A rule that does not
// compile is an error naming the policy and the rule.
func ReadPolicies(data []byte) ([]*Policy, error) {
	var out []*Policy
	for i, doc := range yamlSeparator.Split(string(data), -1) {
		if len(bytes.TrimSpace([]byte(doc))) == 0 {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if head.APIVersion != policyv1.GroupVersion.String() || head.Kind != "PlanPolicy" && head.Kind != "NamespacedPlanPolicy" {
			continue
		}
		var pol policyv1.PlanPolicy // both kinds share spec and metadata
		if err := yaml.UnmarshalStrict([]byte(doc), &pol); err != nil {
			return nil, fmt.Errorf("document %d (%s %s): %w", i+1, head.Kind, pol.Name, err)
		}
		ns := ""
		if head.Kind == "NamespacedPlanPolicy" {
			ns = pol.Namespace
			if ns == "" {
				ns = "default"
			}
		}
		p, err := Compile(pol.Name, ns, types.UID(fmt.Sprint(i)), pol.Generation, pol.Spec)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", head.Kind, pol.Name, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Failed are the results that did not pass, with this enforcement.
func Failed(results []Result, e policyv1.Enforcement) []Result {
	var out []Result
	for _, r := range results {
		if !r.Passed && r.Enforcement == e {
			out = append(out, r)
		}
	}
	return out
}
