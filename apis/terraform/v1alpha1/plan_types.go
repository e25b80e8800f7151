package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// Plan is the readable form of a Terraform managed resource's latest plan with changes:
// what it does and its text as terraform shows it, sensitive values masked. It is for the
// people who review and approve plans, who need no access to Secrets: the saved plan
// (which holds every input value in plain text) and the state stay in Secrets they
// cannot read. The controller writes it next to the resource, named tfplan-<resource UID
// without dashes>, owned by the resource, and removes it with the resource.
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=terraplane,shortName=tfplan
// +kubebuilder:printcolumn:name="KIND",type=string,JSONPath=`.resourceRef.kind`
// +kubebuilder:printcolumn:name="RESOURCE",type=string,JSONPath=`.resourceRef.name`
// +kubebuilder:printcolumn:name="PLAN",type=string,JSONPath=`.summary.id`
// +kubebuilder:printcolumn:name="REASON",type=string,JSONPath=`.summary.reason`
// +kubebuilder:printcolumn:name="ADD",type=integer,JSONPath=`.summary.add`
// +kubebuilder:printcolumn:name="CHANGE",type=integer,JSONPath=`.summary.change`
// +kubebuilder:printcolumn:name="DESTROY",type=integer,JSONPath=`.summary.destroy`
// +kubebuilder:printcolumn:name="REPLACE",type=integer,JSONPath=`.summary.replace`
// +kubebuilder:printcolumn:name="MADE",type=date,JSONPath=`.summary.createdAt`
type Plan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// ResourceRef names the managed resource the plan is for.
	ResourceRef common.ObjectReference `json:"resourceRef"`
	// Summary is what the plan does, as status.terraform.plan of the resource says it;
	// its id is what spec.approvedPlan approves.
	Summary common.PlanSummary `json:"summary"`
	// Text is the plan as terraform shows it, sensitive values masked; a very large plan's
	// text is cut, with a note of what was left out.
	// +optional
	Text string `json:"text,omitempty"`
}

// PlanList is a list of Plans.
// +kubebuilder:object:root=true
type PlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Plan `json:"items"`
}
