package v1alpha1

// RedisInstanceParameters are the inputs of the bundled tfmodules/gcp/redis module: a
// Memorystore for Redis instance.
// +terraplane:managed:kind=RedisInstance,noun="a Memorystore for Redis instance"
type RedisInstanceParameters struct {
	// InstanceName is the instance's name; set from the claim when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]{0,38}[a-z0-9]$`
	// +terraplane:immutable="a new name replaces the instance"
	InstanceName string `json:"instanceName,omitempty"`
	// RedisVersion is the major.minor version, e.g. "7.2"; empty takes Google's default.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	RedisVersion string `json:"redisVersion,omitempty"`
	// MemorySizeGB is the instance's memory; 1 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=300
	MemorySizeGB int32 `json:"memorySizeGB,omitempty"`
	// HighAvailability gives the STANDARD_HA tier: a replica in another zone that takes over.
	// +optional
	// +terraplane:immutable="another tier replaces the instance"
	HighAvailability bool `json:"highAvailability,omitempty"`
	// ReadReplicas are replicas serving reads (STANDARD_HA only), 0 to 5.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	ReadReplicas int32 `json:"readReplicas,omitempty"`
	// AuthorizedNetwork is the self link of the VPC network clients connect from; empty
	// takes the project's default network.
	// +optional
	AuthorizedNetwork string `json:"authorizedNetwork,omitempty"`
	// AuthDisabled turns off the AUTH password; the connection Secret then has no password.
	// +optional
	AuthDisabled bool `json:"authDisabled,omitempty"`
	// Labels to put on the instance.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}
