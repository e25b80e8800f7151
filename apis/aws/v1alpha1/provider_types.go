package v1alpha1

// Keys read from a Provider's credentials Secret.
const (
	// CredentialsAccessKeyID is the Secret key holding the access key ID.
	CredentialsAccessKeyID = "accessKeyID"
	// CredentialsSecretAccessKey is the Secret key holding the secret access key.
	CredentialsSecretAccessKey = "secretAccessKey"
	// CredentialsSessionToken is the optional Secret key holding a session token.
	CredentialsSessionToken = "sessionToken"
)

// CredentialsSecretReference names the Secret, in the Provider's namespace, that holds
// the keys accessKeyID, secretAccessKey and optionally sessionToken.
type CredentialsSecretReference struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// CredentialsSource says where the aws provider's credentials come from.
// +kubebuilder:validation:Enum=Secret;InjectedIdentity
type CredentialsSource string

const (
	// CredentialsSourceSecret reads access keys from the Secret in credentialsSecretRef.
	CredentialsSourceSecret CredentialsSource = "Secret"
	// CredentialsSourceInjectedIdentity uses the workload identity injected into the
	// controller's pod (IRSA web identity, EKS Pod Identity): no Secret at all.
	CredentialsSourceInjectedIdentity CredentialsSource = "InjectedIdentity"
)

// ConnectionCredentials says whether connection Secrets may carry a Provider's own keys.
// +kubebuilder:validation:Enum=None;Provider
type ConnectionCredentials string

const (
	// ConnectionCredentialsNone hands out no Provider credential: a connection Secret
	// holds only what its resource's module outputs.
	ConnectionCredentialsNone ConnectionCredentials = "None"
	// ConnectionCredentialsProvider lets a kind that needs keys but made none (an
	// S3Bucket without createAccessKey) hand out the Provider's own, for an S3-compatible
	// server without IAM, such as MinIO in development.
	ConnectionCredentialsProvider ConnectionCredentials = "Provider"
)

// EndpointURL is a service endpoint's http:// or https:// URL.
// +kubebuilder:validation:Pattern=`^https?://`
// +kubebuilder:validation:MaxLength=2048
type EndpointURL string

// Credentials say how terraform authenticates to AWS.
type Credentials struct {
	// Source is Secret (the keys in credentialsSecretRef) or InjectedIdentity (the
	// controller pod's workload identity, e.g. IRSA's AWS_ROLE_ARN and
	// AWS_WEB_IDENTITY_TOKEN_FILE, passed to terraform).
	// +kubebuilder:default=Secret
	Source CredentialsSource `json:"source"`
}

// ProviderSpec configures the hashicorp/aws Terraform provider.
// +terraplane:provider:kind=Provider,doc="configures access to AWS (or an S3-compatible endpoint) for managed resources in its namespace."
// +terraplane:provider:printcolumn:name="REGION",type=string,JSONPath=`.spec.region`
// +terraplane:provider:printcolumn:name="ENDPOINT",type=string,JSONPath=`.spec.endpoint`
// +kubebuilder:validation:XValidation:rule="(has(self.credentials) && self.credentials.source == 'InjectedIdentity') != has(self.credentialsSecretRef)",message="set credentialsSecretRef for credentials from a Secret, or credentials.source: InjectedIdentity without credentialsSecretRef"
// +kubebuilder:validation:XValidation:rule="!has(self.connectionCredentials) || self.connectionCredentials != 'Provider' || has(self.credentialsSecretRef)",message="connectionCredentials: Provider hands out the keys in credentialsSecretRef; set it, or use connectionCredentials: None"
type ProviderSpec struct {
	// Region resources are made in.
	// +kubebuilder:validation:MinLength=1
	Region string `json:"region"`
	// Credentials choose where credentials come from; without it, the Secret in
	// credentialsSecretRef.
	// +optional
	Credentials *Credentials `json:"credentials,omitempty"`
	// CredentialsSecretRef names the Secret with the credentials. They reach Terraform
	// only through the environment of the terraform process. Required unless
	// credentials.source is InjectedIdentity.
	// +optional
	CredentialsSecretRef *CredentialsSecretReference `json:"credentialsSecretRef,omitempty"`
	// ConnectionCredentials None (the default) keeps this Provider's keys out of every
	// connection Secret. Provider lets kinds that need keys but make none (an S3Bucket
	// without createAccessKey) hand out this Provider's keys to their claims: only for an
	// S3-compatible server without IAM, such as MinIO in development, since every claim's
	// namespace then holds the Provider's keys. No other kind ever hands them out.
	// +kubebuilder:default=None
	// +optional
	ConnectionCredentials ConnectionCredentials `json:"connectionCredentials,omitempty"`
	// Endpoint overrides the S3 endpoint, e.g. for an S3-compatible server such as MinIO.
	// +optional
	// +kubebuilder:validation:Pattern=`^https?://`
	Endpoint string `json:"endpoint,omitempty"`
	// Endpoints override other services' endpoints by service name (sts, iam, ec2, rds,
	// elasticache, eks), e.g. for a private endpoint or an AWS API emulator. S3 uses endpoint.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k in ['sts', 'iam', 'ec2', 'rds', 'elasticache', 'eks'])",message="endpoints may name sts, iam, ec2, rds, elasticache and eks; the S3 endpoint is spec.endpoint"
	Endpoints map[string]EndpointURL `json:"endpoints,omitempty"`
	// S3UsePathStyle addresses buckets as endpoint/bucket instead of bucket.endpoint.
	// +optional
	S3UsePathStyle bool `json:"s3UsePathStyle,omitempty"`
	// SkipCredentialsValidation skips the STS call that checks the credentials.
	// +optional
	SkipCredentialsValidation bool `json:"skipCredentialsValidation,omitempty"`
	// SkipRequestingAccountID skips looking up the account ID.
	// +optional
	SkipRequestingAccountID bool `json:"skipRequestingAccountID,omitempty"`
	// SkipMetadataAPICheck skips the EC2 metadata API.
	// +optional
	SkipMetadataAPICheck bool `json:"skipMetadataAPICheck,omitempty"`
	// SkipRegionValidation accepts any region name.
	// +optional
	SkipRegionValidation bool `json:"skipRegionValidation,omitempty"`
}
