// Package v1alpha1 holds ClaimDefinition: a claim kind, and its portable class kind,
// that a platform team defines at run time, with a schema generated from a Terraform
// module's variables or written out explicitly.
// +kubebuilder:object:generate=true
// +groupName=apiextensions.terraplane.io
package v1alpha1
