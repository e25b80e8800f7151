package v1alpha1

// Keys read from a Provider's credentials Secret.
const (
	// CredentialsUsername is the Secret key holding the admin user name.
	CredentialsUsername = "username"
	// CredentialsPassword is the Secret key holding the admin password.
	CredentialsPassword = "password"
)

// CredentialsSecretReference names the Secret, in the Provider's namespace, that holds
// the admin's username and password.
type CredentialsSecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// ProviderSpec says where the MySQL server is and how to log in as its admin.
// +terraplane:provider:kind=Provider,doc="is an existing MySQL server that managed databases are made on."
// +terraplane:provider:printcolumn:name="HOST",type=string,JSONPath=`.spec.host`
// +terraplane:provider:printcolumn:name="PORT",type=integer,JSONPath=`.spec.port`
type ProviderSpec struct {
	// Host name or address of the server.
	// +kubebuilder:validation:MinLength=1
	Host string `json:"host"`
	// Port of the server.
	// +optional
	// +kubebuilder:default=3306
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// CredentialsSecretRef names the Secret with the admin credentials. They reach the
	// client only through the environment of the terraform process.
	CredentialsSecretRef CredentialsSecretReference `json:"credentialsSecretRef"`
}
