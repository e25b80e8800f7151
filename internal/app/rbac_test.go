package app

import (
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"terraplane.io/terraplane/internal/kinds"
)

// managerRole reads the manager's ClusterRole as `make generate` wrote it from the markers.
func managerRole(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	raw, err := os.ReadFile("../../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(raw, &role); err != nil {
		t.Fatal(err)
	}
	return role.Rules
}

// grants reports whether rules allow verb on resource of group.
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if !slices.Contains(r.APIGroups, group) || !slices.Contains(r.Verbs, verb) {
			continue
		}
		for _, res := range r.Resources {
			if res == resource || res == "*" && !strings.Contains(resource, "/") || res == "*/status" && strings.HasSuffix(resource, "/status") {
				return true
			}
		}
	}
	return false
}

// TestRoleCoversEveryGroup: every Terraplane API group the controller serves (all but the
// stack manager's, and ClaimDefinitions', plan policies' and resource pools', which it only reads) may be read and written,
// status too; the core objects it works with may be used as it does; and what is the
// stack manager's (stacks, CRDs, RBAC, Deployments) or granted per namespace (Secrets) is
// not in the manager's role.
func TestRoleCoversEveryGroup(t *testing.T) {
	rules := managerRole(t)
	seen := map[string]bool{}
	for gvk := range kinds.NewScheme().AllKnownTypes() {
		g := gvk.Group
		if seen[g] || !strings.HasSuffix(g, "terraplane.io") || g == "stacks.terraplane.io" || g == "apiextensions.terraplane.io" ||
			g == "policy.terraplane.io" || g == "scaling.terraplane.io" {
			continue
		}
		seen[g] = true
		for _, verb := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
			if !grants(rules, g, "things", verb) {
				t.Errorf("the manager may not %s objects of %s", verb, g)
			}
		}
		for _, verb := range []string{"update", "patch"} {
			if !grants(rules, g, "things/status", verb) {
				t.Errorf("the manager may not %s the status of %s", verb, g)
			}
		}
	}
	if len(seen) < 20 {
		t.Fatalf("only %d Terraplane groups found in the scheme", len(seen))
	}
	for _, tc := range []struct{ group, resource, verb string }{
		{"", "configmaps", "watch"}, {"", "namespaces", "get"},
		{"coordination.k8s.io", "leases", "update"}, {"events.k8s.io", "events", "create"},
		{"apiextensions.terraplane.io", "claimdefinitions", "watch"},
		{"policy.terraplane.io", "planpolicies", "watch"}, {"policy.terraplane.io", "namespacedplanpolicies", "list"},
		{"policy.terraplane.io", "planpolicies/status", "patch"},
		{"authentication.k8s.io", "tokenreviews", "create"}, {"authorization.k8s.io", "subjectaccessreviews", "create"},
	} {
		if !grants(rules, tc.group, tc.resource, tc.verb) {
			t.Errorf("the manager may not %s %s (group %q)", tc.verb, tc.resource, tc.group)
		}
	}
	for _, tc := range []struct{ group, resource, verb string }{
		{"stacks.terraplane.io", "stacks", "get"}, {"", "configmaps", "create"}, {"apps", "deployments", "create"},
		{"rbac.authorization.k8s.io", "clusterroles", "create"}, {"", "secrets", "get"}, {"", "secrets", "list"},
		{"apiextensions.k8s.io", "customresourcedefinitions", "get"}, {"apiextensions.terraplane.io", "claimdefinitions", "update"},
		{"policy.terraplane.io", "planpolicies", "update"}, {"policy.terraplane.io", "namespacedplanpolicies", "create"},
	} {
		if grants(rules, tc.group, tc.resource, tc.verb) {
			t.Errorf("the manager's own role may %s %s (group %q): that is the stack manager's, or granted per namespace", tc.verb, tc.resource, tc.group)
		}
	}
}
