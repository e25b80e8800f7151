package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// ProviderConfigSpec says how to reach a target Kubernetes cluster.
type ProviderConfigSpec struct {
	// CredentialsSecretRef names a Secret holding either a kubeconfig (key kubeconfig) or
	// the fields endpoint, clusterCA, clientCert, clientKey, token, username and password
	// (whichever apply). A ServiceAccount token Secret (keys token and ca.crt, no
	// endpoint) reaches the control cluster itself. The namespace defaults to the
	// ProviderConfig's.
	CredentialsSecretRef common.SecretReference `json:"credentialsSecretRef"`
}

// ProviderConfigStatus reports whether the target cluster is reachable, and who uses it.
type ProviderConfigStatus struct {
	// Endpoint is the API server the credentials point at.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// ProviderStatus holds users and the conditions: Ready is True while the cluster
	// answers with these credentials; InUse names the Objects, Clusters and application
	// resources that use it.
	common.ProviderStatus `json:",inline"`
}

// ProviderConfig holds the credentials of one target Kubernetes cluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane;provider
// +kubebuilder:printcolumn:name="SECRET",type=string,JSONPath=`.spec.credentialsSecretRef.name`
// +kubebuilder:printcolumn:name="ENDPOINT",type=string,JSONPath=`.status.endpoint`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="USERS",type=integer,JSONPath=`.status.users`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ProviderConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ProviderConfigSpec   `json:"spec"`
	Status ProviderConfigStatus `json:"status,omitempty"`
}

// ProviderConfigList is a list of ProviderConfigs.
// +kubebuilder:object:root=true
type ProviderConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ProviderConfig `json:"items"`
}

// GetProviderStatus returns who uses the ProviderConfig.
func (p *ProviderConfig) GetProviderStatus() *common.ProviderStatus { return &p.Status.ProviderStatus }
