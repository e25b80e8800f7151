package planpolicy

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	"terraplane.io/terraplane/internal/plandoc"
	"terraplane.io/terraplane/internal/plugins"
)

// CreateCheck is what a create is checked against inside its one apply (the engine's
// Workspace.Check): the policies that match its resource, and what their rules see
// besides the plan.
type CreateCheck struct {
	// Policies are the matching policies, compiled where the create runs.
	Policies []Source `json:"policies"`
	// Object, Claim, Namespace and NamespaceLabels are as Input has them.
	Object          map[string]any    `json:"object"`
	Claim           map[string]any    `json:"claim,omitempty"`
	Namespace       string            `json:"namespace"`
	NamespaceLabels map[string]string `json:"namespaceLabels,omitempty"`
}

// Source is one policy as its object has it.
type Source struct {
	Name       string                  `json:"name"`
	Namespace  string                  `json:"namespace,omitempty"`
	UID        types.UID               `json:"uid"`
	Generation int64                   `json:"generation"`
	Spec       policyv1.PlanPolicySpec `json:"spec"`
}

// CheckCreate evaluates the policies of check (a CreateCheck) on a create's planned
// creates, as the plan of the create would show them, sensitive values and secrets
// redacted. It reports the results ([]Result), and passes the create only when every
// rule passed: any other outcome is given where the plan is kept (the create is
// planned first). It has the engine's CreateChecker signature.
func (c *Cache) CheckCreate(ctx context.Context, check json.RawMessage, creates []plugins.PlannedCreate, secrets []string) (json.RawMessage, bool, error) {
	var cc CreateCheck
	if err := json.Unmarshal(check, &cc); err != nil {
		return nil, false, fmt.Errorf("read the create's check: %w", err)
	}
	changes := createChanges(creates)
	pols := make([]*Policy, 0, len(cc.Policies))
	for _, s := range cc.Policies {
		p, err := c.Compile(s.Name, s.Namespace, s.UID, s.Generation, s.Spec)
		if p == nil {
			return nil, false, err
		}
		pols = append(pols, p) // a rule that does not compile denies
	}
	doc := &plandoc.Document{Changes: plandoc.Redact(changes, secrets...)}
	results := Evaluate(ctx, pols, Input{Plan: doc, Object: cc.Object, Claim: cc.Claim, Namespace: cc.Namespace, NamespaceLabels: cc.NamespaceLabels})
	report, err := json.Marshal(results)
	if err != nil {
		return nil, false, fmt.Errorf("report the create's check: %w", err)
	}
	for _, r := range results {
		if !r.Passed {
			return report, false, nil
		}
	}
	return report, true, nil
}

// createChanges are creates as terraform's plan JSON has its resource_changes.
func createChanges(creates []plugins.PlannedCreate) []any {
	out := make([]any, 0, len(creates))
	for _, c := range creates {
		rc := map[string]any{"address": c.Address, "mode": "managed", "type": c.Type, "provider_name": c.Provider,
			"change": map[string]any{"actions": []any{"create"}, "before": nil, "after": c.After, "after_unknown": c.AfterUnknown,
				"before_sensitive": false, "after_sensitive": c.AfterSensitive}}
		module, local := "", c.Address
		if i := strings.LastIndex(c.Address, "."+c.Type+"."); i >= 0 {
			module, local = c.Address[:i], c.Address[i+1:]
		}
		if module != "" {
			rc["module_address"] = module
		}
		name, key, indexed := strings.Cut(strings.TrimPrefix(local, c.Type+"."), "[")
		rc["name"] = name
		if indexed {
			rc["index"] = instanceKey(strings.TrimSuffix(key, "]"))
		}
		out = append(out, rc)
	}
	return out
}

// instanceKey is an instance key as the plan JSON has it: a number, or a text.
func instanceKey(key string) any {
	if n, err := strconv.Atoi(key); err == nil {
		return n
	}
	var s string
	if err := json.Unmarshal([]byte(key), &s); err == nil {
		return s
	}
	return key
}
