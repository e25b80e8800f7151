package v1alpha1

// AKSClusterParameters are the inputs of the bundled tfmodules/azure/aks module: an AKS
// cluster with one (default) node pool.
// +terraplane:managed:kind=AKSCluster,noun="an AKS cluster"
type AKSClusterParameters struct {
	// ClusterName is the cluster's name; set from the claim when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,61}[a-zA-Z0-9]$`
	// +terraplane:immutable="a new name replaces the cluster"
	ClusterName string `json:"clusterName,omitempty"`
	// ResourceGroupName is an existing resource group to put the cluster in; empty makes
	// a resource group of its own, named after the cluster.
	// +optional
	// +terraplane:immutable="another resource group replaces the cluster"
	ResourceGroupName string `json:"resourceGroupName,omitempty"`
	// KubernetesVersion, e.g. "1.33"; empty takes Azure's default.
	// +optional
	// +kubebuilder:validation:Pattern=`^1\.[0-9]+(\.[0-9]+)?$`
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// NodeCount is the number of nodes in the default node pool; 1 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	NodeCount int32 `json:"nodeCount,omitempty"`
	// VMSize of the nodes; Standard_D2s_v5 when unset.
	// +optional
	VMSize string `json:"vmSize,omitempty"`
	// Tags to put on the cluster (and its resource group, when it makes one).
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}
