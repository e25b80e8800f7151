package v1alpha1

import common "terraplane.io/terraplane/apis/common/v1alpha1"

// CredentialsSecretReference names the Secret, in the ProviderConfig's namespace, that
// holds a target cluster's credentials.
type CredentialsSecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Namespace is deprecated: the Secret is always read from the ProviderConfig's own
	// namespace. When set it must name that namespace; any other is refused
	// (ReferenceNotAllowed), since a Secret cannot consent to being used from elsewhere.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ProviderConfigSpec says how to reach a target Kubernetes cluster, and which other
// namespaces may use it.
// +terraplane:provider:kind=ProviderConfig,shortNames=kubepc;kubeproviderconfig,categories=kubernetes,status=ProviderConfigStatus,doc="holds the credentials of one target Kubernetes cluster."
// +terraplane:provider:printcolumn:name="SECRET",type=string,JSONPath=`.spec.credentialsSecretRef.name`
// +terraplane:provider:printcolumn:name="ENDPOINT",type=string,JSONPath=`.status.endpoint`
// +terraplane:provider:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type ProviderConfigSpec struct {
	// CredentialsSecretRef names a Secret in the ProviderConfig's namespace holding either
	// a kubeconfig (key kubeconfig) or the fields endpoint, clusterCA, clientCert,
	// clientKey, token, username and password (whichever apply). A ServiceAccount token
	// Secret (keys token and ca.crt, no endpoint) reaches the control cluster itself. A
	// kubeconfig may not run commands or read files (exec, auth-provider, tokenFile,
	// client-certificate, client-key, certificate-authority): those are refused
	// (UnsafeKubeconfig) unless the controller runs with --allow-kubeconfig-exec.
	CredentialsSecretRef CredentialsSecretReference `json:"credentialsSecretRef"`
	// AllowedNamespaces lists the other namespaces whose KubernetesApplications and
	// KubernetesApplicationResources may use this ProviderConfig (by name, "*" for all,
	// or by a label selector over namespaces). Without it only objects in the
	// ProviderConfig's own namespace may use it; any other reference is refused
	// (ReferenceNotAllowed). Whoever may use it acts in the target cluster with its
	// credentials.
	// +optional
	AllowedNamespaces *common.AllowedNamespaces `json:"allowedNamespaces,omitempty"`
}

// ProviderConfigStatus reports whether the target cluster is reachable, and who uses it.
type ProviderConfigStatus struct {
	// Endpoint is the API server the credentials point at.
	// +optional
	Endpoint string `json:"endpoint,omitempty"`
	// ObservedGeneration is the generation last checked against the cluster, or found
	// unusable until someone acts (then Stalled says why). While it is behind
	// metadata.generation the ProviderConfig is Reconciling.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ProviderStatus holds users and the conditions: Ready is True while the cluster
	// answers with these credentials, Reconciling and Stalled as kstatus reads them;
	// InUse names the Objects, Clusters and application resources that use it.
	common.ProviderStatus `json:",inline"`
}

// GetAllowedNamespaces returns the namespaces besides its own that may use the
// ProviderConfig.
func (p *ProviderConfig) GetAllowedNamespaces() *common.AllowedNamespaces {
	return p.Spec.AllowedNamespaces
}
