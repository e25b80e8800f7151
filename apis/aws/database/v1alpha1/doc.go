// Package v1alpha1 holds the AWS database kinds: RDSInstanceClass and RDSInstance.
// +kubebuilder:object:generate=true
// +groupName=database.aws.terraplane.io
package v1alpha1
