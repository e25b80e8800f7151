// Package v1alpha1 holds the AWS cache kinds: ReplicationGroupClass and ReplicationGroup (ElastiCache for Redis).
// +kubebuilder:object:generate=true
// +groupName=cache.aws.terraplane.io
package v1alpha1
