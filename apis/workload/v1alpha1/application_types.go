package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceTemplateMetadata names a KubernetesApplicationResource made from a template.
type ResourceTemplateMetadata struct {
	// Name of the KubernetesApplicationResource.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// Labels of the KubernetesApplicationResource; they must match the resourceSelector.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations of the KubernetesApplicationResource.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// KubernetesApplicationResourceTemplate templates one KubernetesApplicationResource,
// whose own spec.template templates the remote object.
type KubernetesApplicationResourceTemplate struct {
	// Metadata of the KubernetesApplicationResource.
	Metadata ResourceTemplateMetadata `json:"metadata"`
	// Spec of the KubernetesApplicationResource (its targetRef is set by the controller).
	Spec KubernetesApplicationResourceSpec `json:"spec"`
}

// KubernetesApplicationSpec is a set of objects placed together on one cluster.
// +kubebuilder:validation:XValidation:rule="has(self.clusterSelector) == has(oldSelf.clusterSelector) && (!has(self.clusterSelector) || self.clusterSelector == oldSelf.clusterSelector)",message="clusterSelector is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.providerConfigRef) == has(oldSelf.providerConfigRef) && (!has(self.providerConfigRef) || self.providerConfigRef == oldSelf.providerConfigRef)",message="providerConfigRef is immutable"
// +kubebuilder:validation:XValidation:rule="!(has(self.clusterSelector) && has(self.providerConfigRef))",message="set clusterSelector or providerConfigRef, not both"
type KubernetesApplicationSpec struct {
	// ClusterSelector selects the KubernetesCluster claims in this namespace the
	// application may be scheduled to; an empty selector matches every cluster.
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
	// ProviderConfigRef places the application directly on the cluster a
	// kubernetes.terraplane.io ProviderConfig reaches, instead of a claim. A
	// ProviderConfig in another namespace is used only when its spec.allowedNamespaces
	// lets this namespace use it; otherwise the application is not scheduled
	// (ReferenceNotAllowed).
	// +optional
	ProviderConfigRef *ProviderConfigReference `json:"providerConfigRef,omitempty"`
	// ResourceSelector selects this application's KubernetesApplicationResources; every
	// template's labels must match it.
	ResourceSelector *metav1.LabelSelector `json:"resourceSelector"`
	// ResourceTemplates template the application's KubernetesApplicationResources.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	ResourceTemplates []KubernetesApplicationResourceTemplate `json:"resourceTemplates,omitempty"`
}

// ProviderConfigReference names a kubernetes.terraplane.io ProviderConfig.
type ProviderConfigReference struct {
	// Name of the ProviderConfig.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the ProviderConfig; defaults to the application's namespace. Another
	// namespace needs the ProviderConfig's consent (its spec.allowedNamespaces).
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ApplicationState is where a KubernetesApplication stands.
// +kubebuilder:validation:Enum=Pending;Scheduled;Submitted;PartiallySubmitted;Failed
type ApplicationState string

// Application states.
const (
	// ApplicationStatePending waits for a cluster.
	ApplicationStatePending ApplicationState = "Pending"
	// ApplicationStateScheduled has a cluster; nothing is submitted yet.
	ApplicationStateScheduled ApplicationState = "Scheduled"
	// ApplicationStateSubmitted has every resource submitted.
	ApplicationStateSubmitted ApplicationState = "Submitted"
	// ApplicationStatePartiallySubmitted has some resources submitted.
	ApplicationStatePartiallySubmitted ApplicationState = "PartiallySubmitted"
	// ApplicationStateFailed has a resource that failed and none submitted.
	ApplicationStateFailed ApplicationState = "Failed"
)

// Condition types of workloads.
const (
	// TypeScheduled says whether the scheduler placed the application.
	TypeScheduled = "Scheduled"
)

// KubernetesApplicationStatus is where the application stands.
type KubernetesApplicationStatus struct {
	// State of the application.
	// +optional
	State ApplicationState `json:"state,omitempty"`
	// ClusterRef is the cluster the scheduler placed the application on.
	// +optional
	ClusterRef *ClusterReference `json:"clusterRef,omitempty"`
	// DesiredResources is the number of resource templates.
	// +optional
	DesiredResources int `json:"desiredResources,omitempty"`
	// SubmittedResources is the number of resources submitted to the cluster.
	// +optional
	SubmittedResources int `json:"submittedResources,omitempty"`
	// Conditions Scheduled, Synced and Ready, and Reconciling and Stalled as kstatus
	// reads them.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation last applied, or found impossible to apply
	// until someone acts (then Stalled says why). While it is behind metadata.generation
	// the application is Reconciling.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// KubernetesApplication is a set of Kubernetes objects scheduled together to one cluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane;workload
// +kubebuilder:printcolumn:name="CLUSTER",type=string,JSONPath=`.status.clusterRef.name`
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="DESIRED",type=integer,JSONPath=`.status.desiredResources`
// +kubebuilder:printcolumn:name="SUBMITTED",type=integer,JSONPath=`.status.submittedResources`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type KubernetesApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KubernetesApplicationSpec   `json:"spec"`
	Status KubernetesApplicationStatus `json:"status,omitempty"`
}

// KubernetesApplicationList is a list of KubernetesApplications.
// +kubebuilder:object:root=true
type KubernetesApplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesApplication `json:"items"`
}
