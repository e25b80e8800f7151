// Package policy reports whether the rules of PlanPolicies and NamespacedPlanPolicies
// compile: Synced=True, or Synced=False with reason InvalidExpression, the CEL error and
// one event. The managed reconcilers evaluate the policies (controllers/terraform).
package policy
