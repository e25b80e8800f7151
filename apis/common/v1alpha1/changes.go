package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ApprovalPolicy says whether a plan with changes is applied at once or waits for approval.
// +kubebuilder:validation:Enum=Automatic;Manual
type ApprovalPolicy string

// Approval policies.
const (
	// ApprovalAutomatic applies every plan that the guardrails let through.
	ApprovalAutomatic ApprovalPolicy = "Automatic"
	// ApprovalManual applies a plan only once spec.approvedPlan names its id.
	ApprovalManual ApprovalPolicy = "Manual"
)

// DestructiveChangePolicy says what happens to a plan that deletes or replaces something
// that exists.
// +kubebuilder:validation:Enum=Refuse;Allow
type DestructiveChangePolicy string

// Destructive change policies.
const (
	// DestructiveRefuse applies such a plan only once spec.approvedPlan names its id.
	DestructiveRefuse DestructiveChangePolicy = "Refuse"
	// DestructiveAllow applies such a plan like any other.
	DestructiveAllow DestructiveChangePolicy = "Allow"
)

// ManagementAction is one thing Terraplane may do to the external resource, as in
// Crossplane's managementPolicies.
// +kubebuilder:validation:Enum="*";Observe;Create;Update;Delete;LateInitialize
type ManagementAction string

// Management actions.
const (
	// ManagementAll allows every action.
	ManagementAll ManagementAction = "*"
	// ManagementObserve plans on the drift interval and reports what it finds.
	ManagementObserve ManagementAction = "Observe"
	// ManagementCreate creates the external resource.
	ManagementCreate ManagementAction = "Create"
	// ManagementUpdate applies changes and corrects drift.
	ManagementUpdate ManagementAction = "Update"
	// ManagementDelete destroys the external resource when the managed resource is deleted.
	ManagementDelete ManagementAction = "Delete"
	// ManagementLateInitialize is accepted for Crossplane compatibility; Terraform fills
	// unset arguments itself, so it changes nothing.
	ManagementLateInitialize ManagementAction = "LateInitialize"
)

// ChangePolicy says how changes reach a Terraform-backed external resource. It is part
// of every managed resource's spec and of every non-portable class's specTemplate, from
// which dynamically provisioned resources take it.
type ChangePolicy struct {
	// Approval of plans with changes: Automatic (default) applies them; Manual saves the
	// plan, publishes it in status.terraform.plan and applies it only once
	// spec.approvedPlan names its id.
	// +optional
	Approval ApprovalPolicy `json:"approval,omitempty"`
	// DestructiveChanges: Refuse (default) applies a plan that deletes or replaces
	// something that exists only once spec.approvedPlan names its id; Allow applies it.
	// The first create is never refused, nor is deleting a resource whose reclaimPolicy
	// is Delete.
	// +optional
	DestructiveChanges DestructiveChangePolicy `json:"destructiveChanges,omitempty"`
	// ManagementPolicies are what Terraplane may do, with Crossplane's meaning: ["*"]
	// (default) everything; ["Observe"] only plans on the drift interval and reports
	// drift (condition Drifted, event DriftDetected) without ever applying or
	// destroying; other sets list Create, Update and Delete beside Observe.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=6
	// +kubebuilder:validation:XValidation:rule="!('*' in self) || size(self) == 1",message="\"*\" stands alone: it allows every action"
	// +kubebuilder:validation:XValidation:rule="'*' in self || 'Observe' in self",message="managementPolicies must include Observe (or be [\"*\"])"
	ManagementPolicies []ManagementAction `json:"managementPolicies,omitempty"`
}

// ApprovalOf returns the approval policy, Automatic when unset.
func (p ChangePolicy) ApprovalOf() ApprovalPolicy {
	if p.Approval == "" {
		return ApprovalAutomatic
	}
	return p.Approval
}

// AllowsDestructive reports whether destructive plans go through without approval.
func (p ChangePolicy) AllowsDestructive() bool { return p.DestructiveChanges == DestructiveAllow }

// Allows reports whether the management policies allow action; unset means ["*"].
func (p ChangePolicy) Allows(action ManagementAction) bool {
	if len(p.ManagementPolicies) == 0 {
		return true
	}
	for _, a := range p.ManagementPolicies {
		if a == ManagementAll || a == action {
			return true
		}
	}
	return false
}

// PlanReason says why a plan was made.
// +kubebuilder:validation:Enum=Create;Update;Drift
type PlanReason string

// Plan reasons.
const (
	// PlanCreate: the resource does not exist yet.
	PlanCreate PlanReason = "Create"
	// PlanUpdate: the inputs changed since the last apply.
	PlanUpdate PlanReason = "Update"
	// PlanDrift: the inputs are unchanged, and the periodic plan found the real resource
	// differs from them.
	PlanDrift PlanReason = "Drift"
)

// MaxPlannedChanges caps status.terraform.plan.changes; the rest are counted in
// changesOmitted.
const MaxPlannedChanges = 20

// PlanSummary describes a Terraform plan by its counts and addresses; it holds no values.
type PlanSummary struct {
	// ID identifies the plan: a hash of its JSON form (changes and outputs, with sensitive
	// values keyed so that no value can be recovered). Approve the plan by setting
	// spec.approvedPlan to it.
	ID string `json:"id"`
	// Reason the plan was made: Create, Update or Drift.
	Reason PlanReason `json:"reason"`
	// Add counts resources the plan creates.
	Add int `json:"add"`
	// Change counts resources the plan updates in place.
	Change int `json:"change"`
	// Destroy counts resources the plan deletes.
	Destroy int `json:"destroy"`
	// Replace counts resources the plan deletes and creates again.
	Replace int `json:"replace"`
	// Import counts resources the plan imports.
	// +optional
	Import int `json:"import,omitempty"`
	// Changes lists the planned changes (at most 20), e.g. {address:
	// aws_s3_bucket.this, actions: [delete, create]}.
	// +optional
	Changes []PlannedChange `json:"changes,omitempty"`
	// ChangesOmitted counts the changes left out of Changes.
	// +optional
	ChangesOmitted int `json:"changesOmitted,omitempty"`
	// Providers lists the provider versions the plan moves to, outside the resource's
	// dependency lock; such a plan waits for approval (reason ProviderUpgrade).
	// +optional
	Providers []ProviderVersionChange `json:"providers,omitempty"`
	// Policies are the results of the plan policies' rules that did not pass, and of
	// those that passed (at most 20 in all).
	// +optional
	Policies []PolicyResult `json:"policies,omitempty"`
	// PoliciesHash identifies the policy generations the plan was checked against.
	// +optional
	PoliciesHash string `json:"policiesHash,omitempty"`
	// CreatedAt is when the plan was made.
	CreatedAt metav1.Time `json:"createdAt"`
	// InputsHash is the checksum of the inputs the plan was made from.
	// +optional
	InputsHash string `json:"inputsHash,omitempty"`
}

// PlannedChange is what a plan does to one resource address.
type PlannedChange struct {
	// Address of the resource, e.g. module.main.aws_s3_bucket.this.
	Address string `json:"address"`
	// Actions Terraform plans for it: create, update, delete (delete then create is a
	// replacement), or import.
	Actions []string `json:"actions"`
}

// PolicyResult is what one rule of a plan policy said about a plan.
type PolicyResult struct {
	// Policy names the policy: name for a PlanPolicy, namespace/name for a
	// NamespacedPlanPolicy.
	Policy string `json:"policy"`
	// Rule is the rule's name.
	Rule string `json:"rule"`
	// Result is Pass, or the enforcement of the failed rule: Deny, RequireApproval or Warn.
	Result string `json:"result"`
	// Message is the rule's message for a failed rule, with the addresses it names.
	// +optional
	Message string `json:"message,omitempty"`
}

// ProviderVersionChange is a provider whose version a plan moves.
type ProviderVersionChange struct {
	// Provider is the provider's address, e.g. registry.terraform.io/hashicorp/random.
	Provider string `json:"provider"`
	// From is the version the resource's lock holds.
	From string `json:"from"`
	// To is the version the plan was made with.
	To string `json:"to"`
}

// ApplySummary records the last plan Terraform applied.
type ApplySummary struct {
	// ID of the applied plan.
	ID string `json:"id"`
	// Add counts resources created.
	Add int `json:"add"`
	// Change counts resources updated in place.
	Change int `json:"change"`
	// Destroy counts resources deleted.
	Destroy int `json:"destroy"`
	// Replace counts resources replaced.
	Replace int `json:"replace"`
	// Time the apply finished.
	Time metav1.Time `json:"time"`
}

// IsHoldReason reports whether a Synced reason is change control holding a plan.
func IsHoldReason(reason string) bool {
	switch reason {
	case ReasonAwaitingApproval, ReasonDestructiveChangeRefused, ReasonAdoptionRefused, ReasonCreateNotAllowed, ReasonProviderUpgrade,
		ReasonPolicyRequiresApproval:
		return true
	}
	return false
}

// PendingPlan is the plan held unapplied (awaiting approval, refused, or drift that the
// management policies leave alone), if any.
func (s *ManagedStatus) PendingPlan() *PlanSummary {
	plan := s.Terraform.Plan
	if plan == nil || s.Terraform.LastApply != nil && s.Terraform.LastApply.ID == plan.ID {
		return nil
	}
	synced := meta.FindStatusCondition(s.Conditions, TypeSynced)
	if synced != nil && synced.Status == metav1.ConditionFalse && IsHoldReason(synced.Reason) ||
		meta.IsStatusConditionTrue(s.Conditions, TypeDrifted) {
		return plan
	}
	return nil
}
