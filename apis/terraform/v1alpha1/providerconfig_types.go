package v1alpha1

import apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// StubAnnotation marks a ProviderConfig that `terraplane claim generate` wrote as a stub
// to fill in: a ModuleClass that names it is not Ready until the annotation is removed.
const StubAnnotation = "terraform.terraplane.io/stub"

// SecretKeySelector names one key of a Secret in the referrer's namespace.
type SecretKeySelector struct {
	// Name of the Secret.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key in the Secret.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
	// Namespace of the Secret. Only a Module's variablesFrom honours it, and only for the
	// Module's own namespace or the namespace of the claim bound to the Module (which
	// names the Module in its spec.resourceRef): the claim reconciler sets it to the
	// claim's namespace for a defined claim kind's Secret references. Any other namespace
	// is refused (ReferenceNotAllowed). Elsewhere, and when omitted, the Secret is in the
	// referrer's namespace.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// CredentialEnv delivers one Secret value to terraform as an environment variable.
type CredentialEnv struct {
	// Env is the environment variable, e.g. AWS_ACCESS_KEY_ID, or TF_TOKEN_<host> (dots
	// as underscores, e.g. TF_TOKEN_app_terraform_io) for modules that a module calls from
	// a private Terraform registry.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('TF_') || (self.startsWith('TF_TOKEN_') && size(self) > 9)",message="TF_* variables are reserved for terraform itself; only TF_TOKEN_<host> (a private registry's token) is allowed"
	Env string `json:"env"`
	// SecretKeyRef is where the value is.
	SecretKeyRef SecretKeySelector `json:"secretKeyRef"`
}

// ProviderConfigSpec configures one Terraform provider.
// +terraplane:provider:kind=ProviderConfig,shortNames=tfpc;tfproviderconfig,categories=terraform,doc="is one Terraform provider's configuration for Modules in its namespace."
// +terraplane:provider:printcolumn:name="SOURCE",type=string,JSONPath=`.spec.source`
// +terraplane:provider:printcolumn:name="VERSION",type=string,JSONPath=`.spec.version`
// +terraplane:provider:printcolumn:name="ALIAS",type=string,JSONPath=`.spec.alias`
type ProviderConfigSpec struct {
	// Source is the provider's source address, e.g. hashicorp/random.
	// +kubebuilder:validation:Pattern=`^([a-z0-9.-]+/)?[a-z0-9-]+/[a-z0-9-]+$`
	Source string `json:"source"`
	// Version is a version constraint, e.g. "3.9.0" or "~> 5.0".
	// +optional
	Version string `json:"version,omitempty"`
	// Alias names an additional configuration of the same provider.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_]*$`
	Alias string `json:"alias,omitempty"`
	// Config holds the provider block's attributes (nested blocks as objects or lists of
	// objects). Values reach Terraform only as data, in the workspace's
	// terraplane-providers.json, never as configuration text.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	Config *apiextensionsv1.JSON `json:"config,omitempty"`
	// Credentials are delivered as environment variables of the terraform process, never
	// written into the workspace.
	// +optional
	// +listType=map
	// +listMapKey=env
	Credentials []CredentialEnv `json:"credentials,omitempty"`
	// InjectedIdentity names workload-identity variables of the controller's own
	// environment that terraform receives as they are: what IRSA or EKS Pod Identity
	// (AWS_*), Azure workload identity (AZURE_*, ARM_*) or a Google credentials file
	// (GOOGLE_*) inject into its pod. Only these names are accepted.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Enum=AWS_ROLE_ARN;AWS_WEB_IDENTITY_TOKEN_FILE;AWS_ROLE_SESSION_NAME;AWS_REGION;AWS_DEFAULT_REGION;AWS_STS_REGIONAL_ENDPOINTS;AWS_CONTAINER_CREDENTIALS_FULL_URI;AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE;AZURE_CLIENT_ID;AZURE_TENANT_ID;AZURE_FEDERATED_TOKEN_FILE;AZURE_AUTHORITY_HOST;ARM_CLIENT_ID;ARM_TENANT_ID;ARM_SUBSCRIPTION_ID;ARM_USE_OIDC;ARM_USE_AKS_WORKLOAD_IDENTITY;ARM_OIDC_TOKEN_FILE_PATH;GOOGLE_APPLICATION_CREDENTIALS;GOOGLE_CLOUD_PROJECT;GOOGLE_IMPERSONATE_SERVICE_ACCOUNT
	InjectedIdentity []string `json:"injectedIdentity,omitempty"`
	// ConnectionCredentials lists the credentials (by env) that Modules using this
	// ProviderConfig may hand out in their connection Secrets (a connection entry's
	// fromProviderConfig.credential); none by default.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=16
	ConnectionCredentials []string `json:"connectionCredentials,omitempty"`
}
