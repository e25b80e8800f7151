// Package v1alpha1 holds the GCP cache kinds: RedisInstanceClass and RedisInstance (Memorystore for Redis).
// +kubebuilder:object:generate=true
// +groupName=cache.gcp.terraplane.io
package v1alpha1
