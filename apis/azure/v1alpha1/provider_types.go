package v1alpha1

// Keys read from a Provider's credentials Secret.
const (
	// CredentialsClientID is the Secret key holding the service principal's client ID.
	CredentialsClientID = "clientID"
	// CredentialsClientSecret is the Secret key holding the service principal's client secret.
	CredentialsClientSecret = "clientSecret"
)

// CredentialsSecretReference names the Secret, in the Provider's namespace, that holds
// the keys clientID and clientSecret of a service principal.
type CredentialsSecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// CredentialsSource says where the azurerm provider's credentials come from.
// +kubebuilder:validation:Enum=Secret;InjectedIdentity
type CredentialsSource string

const (
	// CredentialsSourceSecret reads a service principal's client credentials from
	// credentialsSecretRef.
	CredentialsSourceSecret CredentialsSource = "Secret"
	// CredentialsSourceInjectedIdentity uses the controller pod's own identity: AKS
	// workload identity (AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE)
	// or, without it, the managed identity of the node.
	CredentialsSourceInjectedIdentity CredentialsSource = "InjectedIdentity"
)

// Credentials say how terraform authenticates to Azure.
type Credentials struct {
	// Source is Secret (the client credentials in credentialsSecretRef) or
	// InjectedIdentity (the controller pod's workload or managed identity).
	// +kubebuilder:default=Secret
	Source CredentialsSource `json:"source"`
}

// ProviderSpec is where and as whom the azurerm provider runs.
// +terraplane:provider:kind=Provider,doc="configures the hashicorp/azurerm Terraform provider for the Azure managed\nkinds. Its credentials never reach a connection Secret."
// +terraplane:provider:printcolumn:name="SUBSCRIPTION",type=string,JSONPath=`.spec.subscriptionID`
// +terraplane:provider:printcolumn:name="LOCATION",type=string,JSONPath=`.spec.location`
// +kubebuilder:validation:XValidation:rule="(has(self.credentials) && self.credentials.source == 'InjectedIdentity') || has(self.credentialsSecretRef)",message="name the Secret with clientID and clientSecret in credentialsSecretRef, or set credentials.source: InjectedIdentity"
type ProviderSpec struct {
	// SubscriptionID is the subscription resources are made in.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F-]{36}$`
	SubscriptionID string `json:"subscriptionID"`
	// TenantID is the Microsoft Entra tenant the identity belongs to.
	// +kubebuilder:validation:Pattern=`^[0-9a-fA-F-]{36}$`
	TenantID string `json:"tenantID"`
	// Location resources are made in, e.g. westeurope.
	// +kubebuilder:validation:MinLength=1
	Location string `json:"location"`
	// Credentials choose where credentials come from; without it, the Secret in
	// credentialsSecretRef.
	// +optional
	Credentials *Credentials `json:"credentials,omitempty"`
	// CredentialsSecretRef names the Secret with the keys clientID and clientSecret. They
	// reach Terraform only through the environment of the terraform process
	// (ARM_CLIENT_ID, ARM_CLIENT_SECRET). Required unless credentials.source is
	// InjectedIdentity.
	// +optional
	CredentialsSecretRef *CredentialsSecretReference `json:"credentialsSecretRef,omitempty"`
}
