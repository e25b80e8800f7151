// Package planpolicy compiles the CEL rules of PlanPolicies and NamespacedPlanPolicies
// and evaluates them on Terraform plans: which policies match a managed resource, the
// plan document the rules see (terraform's plan JSON with sensitive values redacted),
// and what the failed rules ask for (Deny, RequireApproval, Warn).
package planpolicy
