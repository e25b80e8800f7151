package v1alpha1

// EKSClusterParameters are the inputs of the bundled tfmodules/aws/eks module: an EKS
// cluster, one managed node group, and the IAM roles both need.
// +terraplane:managed:kind=EKSCluster,noun="an EKS cluster"
type EKSClusterParameters struct {
	// ClusterName is the cluster's name (and the prefix of its IAM roles); set from the
	// claim when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]{0,38}[a-z0-9]$`
	// +terraplane:immutable="a new name replaces the cluster"
	ClusterName string `json:"clusterName,omitempty"`
	// KubernetesVersion of the control plane, e.g. "1.33"; empty takes EKS's default.
	// +optional
	// +kubebuilder:validation:Pattern=`^1\.[0-9]+$`
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// NodeCount is the node group's size; 2 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	NodeCount int32 `json:"nodeCount,omitempty"`
	// InstanceTypes of the nodes; t3.medium when unset.
	// +optional
	InstanceTypes []string `json:"instanceTypes,omitempty"`
	// SubnetIDs (at least two, in different zones) the cluster and nodes are placed in;
	// empty makes a VPC (vpcCIDR) with one subnet in each of two zones.
	// +optional
	SubnetIDs []string `json:"subnetIDs,omitempty"`
	// VPCCIDR is the address range of the VPC made when subnetIDs is empty; 10.0.0.0/16 when unset.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9.]+/[0-9]+$`
	// +terraplane:immutable="another range replaces the VPC and the cluster"
	VPCCIDR string `json:"vpcCIDR,omitempty"`
	// EndpointPrivateOnly turns off the API server's public endpoint.
	// +optional
	EndpointPrivateOnly bool `json:"endpointPrivateOnly,omitempty"`
	// Tags to put on the cluster and what the module makes for it.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}
