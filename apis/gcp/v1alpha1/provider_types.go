package v1alpha1

// CredentialsKey is the key of a Provider's credentials Secret that holds the service
// account key, as the JSON file Google Cloud hands out.
const CredentialsKey = "credentials.json"

// CredentialsSecretReference names the Secret, in the Provider's namespace, whose key
// credentials.json holds a service account key.
type CredentialsSecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// CredentialsSource says where the google provider's credentials come from.
// +kubebuilder:validation:Enum=Secret;InjectedIdentity
type CredentialsSource string

const (
	// CredentialsSourceSecret reads a service account key from credentialsSecretRef.
	CredentialsSourceSecret CredentialsSource = "Secret"
	// CredentialsSourceInjectedIdentity uses the controller pod's own identity: GKE
	// Workload Identity through the metadata server, or the credential configuration file
	// that GOOGLE_APPLICATION_CREDENTIALS names (workload identity federation).
	CredentialsSourceInjectedIdentity CredentialsSource = "InjectedIdentity"
)

// Credentials say how terraform authenticates to Google Cloud.
type Credentials struct {
	// Source is Secret (the service account key in credentialsSecretRef) or
	// InjectedIdentity (the controller pod's workload identity).
	// +kubebuilder:default=Secret
	Source CredentialsSource `json:"source"`
}

// ProviderSpec is where and as whom the google provider runs.
// +terraplane:provider:kind=Provider,doc="configures the hashicorp/google Terraform provider for the GCP managed kinds.\nIts credentials never reach a connection Secret."
// +terraplane:provider:printcolumn:name="PROJECT",type=string,JSONPath=`.spec.project`
// +terraplane:provider:printcolumn:name="REGION",type=string,JSONPath=`.spec.region`
// +kubebuilder:validation:XValidation:rule="(has(self.credentials) && self.credentials.source == 'InjectedIdentity') || has(self.credentialsSecretRef)",message="name the Secret with the service account key in credentialsSecretRef, or set credentials.source: InjectedIdentity"
type ProviderSpec struct {
	// Project is the ID of the project resources are made in.
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`
	Project string `json:"project"`
	// Region resources are made in, e.g. europe-west1.
	// +kubebuilder:validation:MinLength=1
	Region string `json:"region"`
	// Credentials choose where credentials come from; without it, the Secret in
	// credentialsSecretRef.
	// +optional
	Credentials *Credentials `json:"credentials,omitempty"`
	// CredentialsSecretRef names the Secret whose key credentials.json holds a service
	// account key. It reaches Terraform only through the environment of the terraform
	// process (GOOGLE_CREDENTIALS), never a file. Required unless credentials.source is
	// InjectedIdentity.
	// +optional
	CredentialsSecretRef *CredentialsSecretReference `json:"credentialsSecretRef,omitempty"`
}
