package v1alpha1

// RedisCacheParameters are the inputs of the bundled tfmodules/azure/rediscache module:
// an Azure Cache for Redis.
// +terraplane:managed:kind=RedisCache,noun="an Azure Cache for Redis"
type RedisCacheParameters struct {
	// CacheName is the cache's globally unique name; set from the claim when
	// provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-zA-Z0-9][a-zA-Z0-9-]{0,61}[a-zA-Z0-9]$`
	// +terraplane:immutable="a new name replaces the cache"
	CacheName string `json:"cacheName,omitempty"`
	// ResourceGroupName is an existing resource group to put the cache in; empty makes a
	// resource group of its own, named after the cache.
	// +optional
	// +terraplane:immutable="another resource group replaces the cache"
	ResourceGroupName string `json:"resourceGroupName,omitempty"`
	// SkuName is Basic (one node, the default), Standard (a primary and a replica) or
	// Premium (replicas per primary, virtual networks).
	// +optional
	// +kubebuilder:validation:Enum="";Basic;Standard;Premium
	SkuName string `json:"skuName,omitempty"`
	// Capacity is the size within the SKU: 0 to 6 for Basic and Standard (C0 to C6),
	// 1 to 5 for Premium (P1 to P5).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=6
	Capacity int32 `json:"capacity,omitempty"`
	// RedisVersion is the major version; 6 when unset, the only one Azure still creates.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+$`
	RedisVersion string `json:"redisVersion,omitempty"`
	// ReplicasPerPrimary is the number of replicas of the primary (Premium only, 1 to 3).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3
	ReplicasPerPrimary int32 `json:"replicasPerPrimary,omitempty"`
	// Tags to put on the cache (and its resource group, when it makes one).
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}
