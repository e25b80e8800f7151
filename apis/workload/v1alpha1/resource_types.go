package v1alpha1

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterKind is the kind of object a workload is placed on.
// +kubebuilder:validation:Enum=KubernetesCluster;ProviderConfig
type ClusterKind string

// Cluster kinds.
const (
	// ClusterKindClaim is a compute.terraplane.io KubernetesCluster claim in the workload's namespace.
	ClusterKindClaim ClusterKind = "KubernetesCluster"
	// ClusterKindProviderConfig is a kubernetes.terraplane.io ProviderConfig.
	ClusterKindProviderConfig ClusterKind = "ProviderConfig"
)

// ClusterReference names the target cluster of a workload.
type ClusterReference struct {
	// Kind is KubernetesCluster (a claim) or ProviderConfig.
	Kind ClusterKind `json:"kind"`
	// Name of the claim or ProviderConfig.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace of the claim or ProviderConfig; defaults to the workload's namespace. A
	// ProviderConfig in another namespace must allow the workload's namespace (its
	// spec.allowedNamespaces); a claim is used only from its own namespace. Otherwise the
	// reference is refused (ReferenceNotAllowed).
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// KubernetesApplicationResourceSpec is one object to submit to a target cluster.
type KubernetesApplicationResourceSpec struct {
	// Template is the object to create in the target cluster: any kind, namespaced or
	// cluster scoped.
	Template Template `json:"template"`
	// Secrets name Secrets in this namespace that are copied into the template's
	// namespace of the target cluster (default when it has none) as
	// <resource-name>-<secret-name>. The object is submitted only once they all exist.
	// +optional
	Secrets []corev1.LocalObjectReference `json:"secrets,omitempty"`
	// TargetRef is the cluster to submit to; the application controller sets it from
	// its application's placement. One in another namespace needs its consent (see
	// namespace).
	// +optional
	TargetRef *ClusterReference `json:"targetRef,omitempty"`
}

// ResourceState is where a KubernetesApplicationResource stands.
// +kubebuilder:validation:Enum=Pending;Submitted;Failed
type ResourceState string

// Resource states.
const (
	// ResourceStatePending waits for a target, a Secret, or a reachable cluster.
	ResourceStatePending ResourceState = "Pending"
	// ResourceStateSubmitted means the remote object matches the template.
	ResourceStateSubmitted ResourceState = "Submitted"
	// ResourceStateFailed means the object could not be submitted; see the Synced condition.
	ResourceStateFailed ResourceState = "Failed"
)

// KubernetesApplicationResourceStatus is what the target cluster reports.
type KubernetesApplicationResourceStatus struct {
	// State of the submission.
	// +optional
	State ResourceState `json:"state,omitempty"`
	// ClusterRef is the cluster the object was submitted to.
	// +optional
	ClusterRef *ClusterReference `json:"clusterRef,omitempty"`
	// Remote is the remote object's .status, copied verbatim.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Remote *apiextensionsv1.JSON `json:"remote,omitempty"`
	// Conditions Ready and Synced, and Reconciling and Stalled as kstatus reads them.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation last applied, or found impossible to apply
	// until someone acts (then Stalled says why). While it is behind metadata.generation
	// the resource is Reconciling.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// KubernetesApplicationResource is one object submitted to a target cluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane;workload
// +kubebuilder:validation:XValidation:rule="self.spec.template.apiVersion == oldSelf.spec.template.apiVersion",message="template apiVersion is immutable"
// +kubebuilder:validation:XValidation:rule="self.spec.template.kind == oldSelf.spec.template.kind",message="template kind is immutable"
// +kubebuilder:validation:XValidation:rule="self.spec.template.metadata.name == oldSelf.spec.template.metadata.name",message="template metadata.name is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.spec.template.metadata.__namespace__) == has(oldSelf.spec.template.metadata.__namespace__) && (!has(self.spec.template.metadata.__namespace__) || self.spec.template.metadata.__namespace__ == oldSelf.spec.template.metadata.__namespace__)",message="template metadata.namespace is immutable"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec.targetRef) || (has(self.spec.targetRef) && self.spec.targetRef == oldSelf.spec.targetRef)",message="targetRef is immutable once set"
// +kubebuilder:printcolumn:name="TEMPLATE-KIND",type=string,JSONPath=`.spec.template.kind`
// +kubebuilder:printcolumn:name="TEMPLATE-NAME",type=string,JSONPath=`.spec.template.metadata.name`
// +kubebuilder:printcolumn:name="CLUSTER",type=string,JSONPath=`.status.clusterRef.name`
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type KubernetesApplicationResource struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KubernetesApplicationResourceSpec   `json:"spec"`
	Status KubernetesApplicationResourceStatus `json:"status,omitempty"`
}

// KubernetesApplicationResourceList is a list of KubernetesApplicationResources.
// +kubebuilder:object:root=true
type KubernetesApplicationResourceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KubernetesApplicationResource `json:"items"`
}

// String formats the reference as <kind>/<namespace>/<name>.
func (r ClusterReference) String() string {
	return string(r.Kind) + "/" + r.Namespace + "/" + r.Name
}

// ParseClusterReference reads a reference formatted by String.
func ParseClusterReference(s string) (ClusterReference, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[2] == "" {
		return ClusterReference{}, fmt.Errorf("%q is not <kind>/<namespace>/<name>", s)
	}
	kind := ClusterKind(parts[0])
	if kind != ClusterKindClaim && kind != ClusterKindProviderConfig {
		return ClusterReference{}, fmt.Errorf("%q: kind must be %s or %s", s, ClusterKindClaim, ClusterKindProviderConfig)
	}
	return ClusterReference{Kind: kind, Namespace: parts[1], Name: parts[2]}, nil
}
