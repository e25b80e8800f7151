package v1alpha1

// RedisClusterParameters are the portable fields of a Redis cluster claim.
// +terraplane:claim:kind=RedisCluster,noun="a Redis cluster"
type RedisClusterParameters struct {
	// EngineVersion of Redis, e.g. "7.2".
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	EngineVersion string `json:"engineVersion,omitempty"`
	// Nodes in the cluster.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Nodes int32 `json:"nodes,omitempty"`
	// HighAvailability asks for replicas that take over on failure.
	// +optional
	HighAvailability bool `json:"highAvailability,omitempty"`
}
