package planpolicy

import (
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
)

// KindMatch is a policy's match of a managed kind.
type KindMatch = policyv1.KindMatch

// Target is a managed resource as policies match it.
type Target struct {
	// Group and Kind of the managed resource.
	Group, Kind string
	// Class is the name in its spec.classRef; empty when it has none.
	Class string
	// Namespace is the resource's own namespace.
	Namespace string
	// ClaimNamespace is its claim's namespace; empty when it has no claim.
	ClaimNamespace string
	// NamespaceLabels are the labels of its tenant namespace (TenantNamespace).
	NamespaceLabels map[string]string
}

// TenantNamespace is the namespace a resource is matched by: its claim's when it has one,
// otherwise its own.
func (t Target) TenantNamespace() string {
	if t.ClaimNamespace != "" {
		return t.ClaimNamespace
	}
	return t.Namespace
}

// Matches reports whether the policy applies to t. A NamespacedPlanPolicy applies to the
// resources of its namespace and to those of the claims made there; a PlanPolicy to those
// of the namespaces its match names (all when it names none).
func (p *Policy) Matches(t Target) bool {
	m := p.Match
	if p.Namespace != "" && t.Namespace != p.Namespace && t.ClaimNamespace != p.Namespace {
		return false
	}
	if len(m.Kinds) > 0 && !slices.ContainsFunc(m.Kinds, func(k KindMatch) bool {
		return k.Kind == t.Kind && (k.APIGroup == "" || k.APIGroup == t.Group)
	}) {
		return false
	}
	if len(m.Classes) > 0 && !slices.Contains(m.Classes, t.Class) {
		return false
	}
	if len(m.Namespaces) > 0 && !slices.Contains(m.Namespaces, t.TenantNamespace()) {
		return false
	}
	return p.selector == nil || p.selector.Matches(labels.Set(t.NamespaceLabels))
}

// MatchesKind reports whether the policy may apply to resources of this kind and class,
// whatever their namespace: what a policy change must look at again.
func (p *Policy) MatchesKind(group, kind, class string) bool {
	m := p.Match
	kindOK := len(m.Kinds) == 0 || slices.ContainsFunc(m.Kinds, func(k KindMatch) bool {
		return k.Kind == kind && (k.APIGroup == "" || k.APIGroup == group)
	})
	return kindOK && (len(m.Classes) == 0 || slices.Contains(m.Classes, class))
}
