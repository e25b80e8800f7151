package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// ClusterSpec names an existing Kubernetes cluster: spec.providerRef is the
// kubernetes.terraplane.io ProviderConfig whose credentials Secret reaches it. The
// credentials are written to spec.writeConnectionSecretToRef, from where a bound
// KubernetesCluster claim passes them on.
// +kubebuilder:validation:XValidation:rule="!has(self.approval) && !has(self.destructiveChanges) && !has(self.managementPolicies) && !has(self.approvedPlan)",message="approval, destructiveChanges, managementPolicies and approvedPlan apply to Terraform-backed kinds only: a Cluster has no plans to approve, and changes nothing in the cluster"
// +kubebuilder:validation:XValidation:rule="!has(self.driftInterval) && !has(self.timeout)",message="driftInterval and timeout apply to Terraform-backed kinds only: a Cluster runs no terraform"
type ClusterSpec struct {
	common.ManagedSpec `json:",inline"`
}

// ClusterObservation is what the cluster reports about itself.
type ClusterObservation struct {
	// Endpoint is the cluster's API server.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// Version is the API server's version, e.g. v1.36.3.
	// +optional
	Version string `json:"version,omitempty"`
}

// ClusterStatus is the cluster's observed state.
type ClusterStatus struct {
	common.ManagedStatus `json:",inline"`
	// AtProvider is what the cluster reports.
	// +optional
	AtProvider ClusterObservation `json:"atProvider,omitempty"`
}

// Cluster is a managed resource for an existing Kubernetes cluster, created by an admin
// and bound statically to a KubernetesCluster claim (spec.resourceRef). Deleting it, with
// either reclaim policy, leaves the cluster itself alone: Terraplane did not create it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane;managed
// +kubebuilder:validation:XValidation:rule="has(self.spec.providerRef)",message="spec.providerRef must name the kubernetes.terraplane.io ProviderConfig whose credentials reach the cluster"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.imports)",message="spec.imports is for Terraform-backed kinds; a Cluster adopts nothing"
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.bindingPhase`
// +kubebuilder:printcolumn:name="CLAIM",type=string,JSONPath=`.spec.claimRef.name`
// +kubebuilder:printcolumn:name="ENDPOINT",type=string,JSONPath=`.status.atProvider.endpoint`
// +kubebuilder:printcolumn:name="VERSION",type=string,JSONPath=`.status.atProvider.version`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=="Synced")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterSpec   `json:"spec"`
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterList is a list of Clusters.
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

// GetManagedSpec returns the shared managed spec.
func (c *Cluster) GetManagedSpec() *common.ManagedSpec { return &c.Spec.ManagedSpec }

// GetManagedStatus returns the shared managed status.
func (c *Cluster) GetManagedStatus() *common.ManagedStatus { return &c.Status.ManagedStatus }

// GetForProvider returns nothing: a Cluster has no inputs.
func (c *Cluster) GetForProvider() (map[string]any, error) { return map[string]any{}, nil }

// SetForProvider accepts no inputs.
func (c *Cluster) SetForProvider(map[string]any) error { return nil }

// SetAtProvider records the observation.
func (c *Cluster) SetAtProvider(obs map[string]any) error {
	return common.SetValues(obs, &c.Status.AtProvider)
}
