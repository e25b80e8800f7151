// Package v1alpha1 holds the AWS compute kinds: EKSClusterClass and EKSCluster.
// +kubebuilder:object:generate=true
// +groupName=compute.aws.terraplane.io
package v1alpha1
