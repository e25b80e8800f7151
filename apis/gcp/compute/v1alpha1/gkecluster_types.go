package v1alpha1

// GKEClusterParameters are the inputs of the bundled tfmodules/gcp/gke module: a GKE
// cluster and one node pool.
// +terraplane:managed:kind=GKECluster,noun="a GKE cluster"
type GKEClusterParameters struct {
	// ClusterName is the cluster's name; set from the claim when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]{0,38}[a-z0-9]$`
	// +terraplane:immutable="a new name replaces the cluster"
	ClusterName string `json:"clusterName,omitempty"`
	// Location is a region (a regional cluster, nodes in each of its zones) or a zone (a
	// zonal cluster); empty takes the Provider's region.
	// +optional
	// +terraplane:immutable="a new location replaces the cluster"
	Location string `json:"location,omitempty"`
	// KubernetesVersion is the control plane's minimum Kubernetes version, e.g.
	// "1.33"; empty takes the release channel's default.
	// +optional
	// +kubebuilder:validation:Pattern=`^1\.[0-9]+(\.[0-9]+.*)?$`
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// NodeCount is the number of nodes in each of the node pool's zones; 1 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	NodeCount int32 `json:"nodeCount,omitempty"`
	// MachineType of the nodes; e2-standard-2 when unset.
	// +optional
	MachineType string `json:"machineType,omitempty"`
	// Network and Subnetwork the cluster is placed in; empty takes the default network.
	// +optional
	Network string `json:"network,omitempty"`
	// Subnetwork of network the nodes get their addresses from.
	// +optional
	Subnetwork string `json:"subnetwork,omitempty"`
	// ReleaseChannel picks how upgrades arrive; REGULAR when unset.
	// +optional
	// +kubebuilder:validation:Enum="";RAPID;REGULAR;STABLE;UNSPECIFIED
	ReleaseChannel string `json:"releaseChannel,omitempty"`
	// DeletionProtection refuses to delete the cluster.
	// +optional
	DeletionProtection bool `json:"deletionProtection,omitempty"`
	// Labels to put on the cluster.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}
