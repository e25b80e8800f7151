package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// KubernetesClusterSpec is what an application asks of a Kubernetes cluster.
type KubernetesClusterSpec struct {
	common.ClaimSpec            `json:",inline"`
	KubernetesClusterParameters `json:",inline"`
}

// KubernetesCluster is a claim for a Kubernetes cluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane;claim
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.bindingPhase) && oldSelf.status.bindingPhase == 'Bound') || (has(self.spec) && has(oldSelf.spec) && has(self.spec.resourceRef) == has(oldSelf.spec.resourceRef) && (!has(self.spec.resourceRef) || self.spec.resourceRef == oldSelf.spec.resourceRef))",message="spec.resourceRef is immutable once the claim is Bound; to use another resource, delete this claim (the reclaim policy decides what happens to the bound one) and create a new claim"
// +kubebuilder:validation:XValidation:rule="!(has(oldSelf.status) && has(oldSelf.status.bindingPhase) && oldSelf.status.bindingPhase == 'Bound') || (has(self.spec) && has(oldSelf.spec) && has(self.spec.classRef) == has(oldSelf.spec.classRef) && (!has(self.spec.classRef) || self.spec.classRef == oldSelf.spec.classRef)) || (has(self.spec) && has(self.spec.classRef) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, c.type == 'Synced' && c.reason == 'ClassNotFound'))",message="spec.classRef is immutable once the claim is Bound, because another class would reconfigure the bound resource (its reclaim policy, for one); it may name another class only while the claim reports ClassNotFound. To change class, create a new claim"
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.bindingPhase`
// +kubebuilder:printcolumn:name="CLASS",type=string,JSONPath=`.spec.classRef.name`
// +kubebuilder:printcolumn:name="RESOURCE",type=string,JSONPath=`.spec.resourceRef.name`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=="Synced")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type KubernetesCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KubernetesClusterSpec `json:"spec,omitempty"`
	Status common.ClaimStatus    `json:"status,omitempty"`
}

// KubernetesClusterList is a list of KubernetesClusters.
// +kubebuilder:object:root=true
type KubernetesClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesCluster `json:"items"`
}

// KubernetesClusterClass is a portable class of service for KubernetesClusters.
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=terraplane;class
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.bindingMode) || (has(self.bindingMode) && self.bindingMode == oldSelf.bindingMode)",message="bindingMode is immutable; create a new class"
// +kubebuilder:validation:XValidation:rule="!has(self.bindingMode) || self.bindingMode == 'Immediate'",message="applications are scheduled onto KubernetesClusters rather than consuming their Secret, so bindingMode WaitForFirstConsumer does not apply"
// +kubebuilder:printcolumn:name="CLASS-KIND",type=string,JSONPath=`.classRef.kind`
// +kubebuilder:printcolumn:name="CLASS-NAME",type=string,JSONPath=`.classRef.name`
// +kubebuilder:printcolumn:name="BINDING-MODE",type=string,JSONPath=`.bindingMode`
// +kubebuilder:printcolumn:name="DEFAULT",type=string,JSONPath=`.metadata.labels.terraplane\.io/default`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type KubernetesClusterClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// ClassRef names the non-portable class that satisfies KubernetesClusters of this class.
	ClassRef common.ClassReference `json:"classRef"`
	// BindingMode Immediate (default) provisions claims at once; WaitForFirstConsumer
	// waits until an application using the claim's connection Secret is scheduled.
	// +kubebuilder:default=Immediate
	// +optional
	BindingMode common.BindingMode `json:"bindingMode,omitempty"`
}

// KubernetesClusterClassList is a list of KubernetesClusterClasses.
// +kubebuilder:object:root=true
type KubernetesClusterClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesClusterClass `json:"items"`
}

// GetClaimSpec returns the shared claim spec.
func (c *KubernetesCluster) GetClaimSpec() *common.ClaimSpec { return &c.Spec.ClaimSpec }

// GetClaimStatus returns the shared claim status.
func (c *KubernetesCluster) GetClaimStatus() *common.ClaimStatus { return &c.Status }

// GetClassRef returns the non-portable class this class points at.
func (c *KubernetesClusterClass) GetClassRef() common.ClassReference { return c.ClassRef }

// GetBindingMode returns when claims of this class are provisioned.
func (c *KubernetesClusterClass) GetBindingMode() common.BindingMode { return c.BindingMode }
