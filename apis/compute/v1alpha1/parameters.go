package v1alpha1

// KubernetesClusterParameters are the portable fields of a Kubernetes cluster claim.
// +terraplane:claim:kind=KubernetesCluster,noun="a Kubernetes cluster",immediateOnly="applications are scheduled onto KubernetesClusters rather than consuming their Secret"
type KubernetesClusterParameters struct {
	// Version of Kubernetes, e.g. "1.36".
	// +optional
	// +kubebuilder:validation:Pattern=`^1\.[0-9]+$`
	Version string `json:"version,omitempty"`
	// NodeCount is the number of worker nodes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	NodeCount int32 `json:"nodeCount,omitempty"`
}
