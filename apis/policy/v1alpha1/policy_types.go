package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Enforcement is what a failing rule does to the plan.
// +kubebuilder:validation:Enum=Deny;RequireApproval;Warn
type Enforcement string

const (
	// EnforcementDeny stops the run: nothing is applied, and approving the plan does not
	// let it through.
	EnforcementDeny Enforcement = "Deny"
	// EnforcementRequireApproval holds the plan for approval (spec.approvedPlan), even for
	// a resource whose approval is Automatic.
	EnforcementRequireApproval Enforcement = "RequireApproval"
	// EnforcementWarn applies the plan, and records an event and a line in its status.
	EnforcementWarn Enforcement = "Warn"
)

// PlanPolicySpec says which plans a policy looks at and the rules they must pass.
type PlanPolicySpec struct {
	// Match selects the managed resources whose plans the rules check; empty matches
	// every managed resource the policy reaches.
	// +optional
	Match PolicyMatch `json:"match,omitempty"`
	// Rules are checked in order on every plan with changes of a matching resource.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	Rules []PolicyRule `json:"rules"`
}

// PolicyMatch selects managed resources; every field set must match (and), any entry of
// a list may (or).
type PolicyMatch struct {
	// Kinds are the managed kinds, e.g. {apiGroup: storage.aws.terraplane.io, kind:
	// S3Bucket}; an empty apiGroup matches the kind in any group.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Kinds []KindMatch `json:"kinds,omitempty"`
	// Namespaces are the names of the namespaces whose resources match: a claimed
	// resource's namespace is its claim's, any other its own. Cluster-scoped policies only.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Namespaces []string `json:"namespaces,omitempty"`
	// NamespaceSelector matches those namespaces by their labels. Cluster-scoped policies only.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// Classes are the names of the classes (spec.classRef.name of the managed resource)
	// whose resources match.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Classes []string `json:"classes,omitempty"`
	// ResourceTypes are the Terraform resource types the rules look at, e.g.
	// aws_s3_bucket: plan.resource_changes holds only changes of these types, and a plan
	// with none of them is not checked. Empty means every type.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	ResourceTypes []string `json:"resourceTypes,omitempty"`
}

// KindMatch names a managed kind.
type KindMatch struct {
	// APIGroup of the kind; empty matches any group.
	// +optional
	APIGroup string `json:"apiGroup,omitempty"`
	// Kind, e.g. S3Bucket or Module.
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
}

// PolicyRule is one CEL check of a plan.
// +kubebuilder:validation:XValidation:rule="!(has(self.message) && has(self.messageExpression))",message="set at most one of message and messageExpression"
type PolicyRule struct {
	// Name identifies the rule in results, events and metrics.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Expression is CEL, as a ValidatingAdmissionPolicy writes it, that is true when the
	// plan passes. It sees plan (terraform's plan JSON: plan.resource_changes[] with
	// address, type, provider_name and change.actions, change.before, change.after and
	// change.after_unknown; sensitive values read "(sensitive value)"), object (the
	// managed resource), claim (its claim, or null) and namespaceObject (the tenant
	// namespace: metadata.name and metadata.labels; a claimed resource's is its claim's).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=8192
	Expression string `json:"expression"`
	// Message says why a plan failed the rule.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// MessageExpression is CEL giving the message as a string, with the expression's
	// variables.
	// +optional
	// +kubebuilder:validation:MaxLength=8192
	MessageExpression string `json:"messageExpression,omitempty"`
	// Enforcement is what a failing plan gets: Deny (default), RequireApproval or Warn.
	// +kubebuilder:default=Deny
	// +optional
	Enforcement Enforcement `json:"enforcement,omitempty"`
}

// PlanPolicyStatus says whether the policy's rules compile.
type PlanPolicyStatus struct {
	// Conditions: Synced is True once every rule compiles, and False (reason
	// InvalidExpression, with the CEL error) while one does not; a rule that does not
	// compile denies every plan the policy matches.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation the conditions describe.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// PlanPolicy is a set of CEL rules every Terraform plan of the managed resources it
// matches must pass before it is applied, in any namespace.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,categories=terraplane
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type PlanPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PlanPolicySpec   `json:"spec"`
	Status PlanPolicyStatus `json:"status,omitempty"`
}

// PlanPolicyList is a list of PlanPolicy.
// +kubebuilder:object:root=true
type PlanPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PlanPolicy `json:"items"`
}

// NamespacedPlanPolicy is a PlanPolicy that applies to the managed resources of its own
// namespace and to those of the claims made in it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane
// +kubebuilder:validation:XValidation:rule="!has(self.spec.match) || (!has(self.spec.match.namespaces) && !has(self.spec.match.namespaceSelector))",message="a NamespacedPlanPolicy applies to its own namespace: spec.match.namespaces and namespaceSelector are for PlanPolicy"
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=".status.conditions[?(@.type=='Synced')].status"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type NamespacedPlanPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PlanPolicySpec   `json:"spec"`
	Status PlanPolicyStatus `json:"status,omitempty"`
}

// NamespacedPlanPolicyList is a list of NamespacedPlanPolicy.
// +kubebuilder:object:root=true
type NamespacedPlanPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NamespacedPlanPolicy `json:"items"`
}
