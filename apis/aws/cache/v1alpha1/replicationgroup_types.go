package v1alpha1

// ReplicationGroupParameters are the inputs of the bundled tfmodules/aws/elasticache
// module: ElastiCache for Redis, a single-node cache cluster for one node without
// failover or auth, a replication group otherwise.
// +terraplane:managed:kind=ReplicationGroup,noun="an ElastiCache for Redis replication group"
type ReplicationGroupParameters struct {
	// ReplicationGroupID names the replication group (or single-node cluster); set from
	// the claim when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]{0,38}[a-z0-9]$`
	// +terraplane:immutable="a new ID replaces the cache"
	ReplicationGroupID string `json:"replicationGroupID,omitempty"`
	// EngineVersion of Redis, e.g. "7.1"; 7.1 when unset.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	EngineVersion string `json:"engineVersion,omitempty"`
	// NodeType of the cache nodes; cache.t3.micro when unset.
	// +optional
	// +kubebuilder:validation:Pattern=`^cache\.[a-z0-9]+\.[a-z0-9]+$`
	NodeType string `json:"nodeType,omitempty"`
	// Nodes is the number of nodes: a primary and nodes-1 replicas; 1 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=6
	Nodes int32 `json:"nodes,omitempty"`
	// HighAvailability turns on automatic failover and Multi-AZ; needs at least 2 nodes.
	// +optional
	HighAvailability bool `json:"highAvailability,omitempty"`
	// AuthToken turns on in-transit encryption and a generated AUTH password, handed out
	// only in the connection Secret.
	// +optional
	AuthToken bool `json:"authToken,omitempty"`
	// SubnetGroupName places the cache in a VPC's subnets; empty takes the default VPC.
	// +optional
	SubnetGroupName string `json:"subnetGroupName,omitempty"`
	// SecurityGroupIDs guard the cache; empty takes the VPC's default group.
	// +optional
	SecurityGroupIDs []string `json:"securityGroupIDs,omitempty"`
	// Tags to put on the cache.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}
