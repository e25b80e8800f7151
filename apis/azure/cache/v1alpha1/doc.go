// Package v1alpha1 holds the Azure cache kinds: RedisCacheClass and RedisCache (Azure Cache for Redis).
// +kubebuilder:object:generate=true
// +groupName=cache.azure.terraplane.io
package v1alpha1
