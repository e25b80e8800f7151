// Package policy reports whether the rules of PlanPolicies and NamespacedPlanPolicies
// compile: Synced=True, or Synced=False with reason InvalidExpression, the CEL error and
// one event. Validator, an admission webhook, refuses such a policy when it is applied,
// with the same errors. The managed reconcilers evaluate the policies
// (controllers/terraform).
package policy
