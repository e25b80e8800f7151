package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// ModuleSource says where a module's files come from. Set exactly one.
// +kubebuilder:validation:XValidation:rule="(has(self.configMap) ? 1 : 0) + (has(self.git) ? 1 : 0) + (has(self.oci) ? 1 : 0) == 1",message="set exactly one of configMap, git or oci"
type ModuleSource struct {
	// ConfigMap holds the module's files, one key per file name (a flat module).
	// +optional
	ConfigMap *ConfigMapSource `json:"configMap,omitempty"`
	// Git clones a repository at a pinned ref.
	// +optional
	Git *GitSource `json:"git,omitempty"`
	// OCI pulls an OCI artifact whose single layer is a tar of the module.
	// +optional
	OCI *OCISource `json:"oci,omitempty"`
}

// OCISource is a module shipped as an OCI artifact (one tar layer).
type OCISource struct {
	// Ref is the artifact, e.g. registry.example.com/modules/db@sha256:... A digest is
	// pinned; a tag is looked up again every --module-source-refresh, so a tag pushed
	// anew reaches the class and, at their next drift check, its Modules.
	// +kubebuilder:validation:MinLength=1
	Ref string `json:"ref"`
	// Path of the module inside the artifact.
	// +optional
	Path string `json:"path,omitempty"`
	// SecretRef names a pull secret in the same namespace: a Secret of type
	// kubernetes.io/dockerconfigjson (kubectl create secret docker-registry) or
	// kubernetes.io/dockercfg. Without one the artifact is pulled with the controller's
	// own registry credentials, or anonymously.
	// +optional
	SecretRef *common.LocalReference `json:"secretRef,omitempty"`
}

// ConfigMapSource names a ConfigMap in the referrer's namespace.
type ConfigMapSource struct {
	// Name of the ConfigMap. It holds the module's files, one key per file name (a flat
	// module), or a single binaryData key module.tar.gz holding a gzipped tar of the
	// module's directory, subdirectories included (as terraplane migrate writes it).
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// GitSource is a module in a git repository, fetched in-process (no git binary needed).
// +kubebuilder:validation:XValidation:rule="self.url.matches('^(https?|ssh|file)://') || self.url.matches('^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:')",message="url must start with https://, http://, ssh:// or file://, or be an scp-like address such as git@github.com:org/repo.git"
// +kubebuilder:validation:XValidation:rule="!self.url.matches('^https?://[^/]*@')",message="put credentials in the Secret named by secretRef, not in the URL"
// +kubebuilder:validation:XValidation:rule="!(has(self.secretRef) && self.url.startsWith('file://'))",message="file:// repositories take no secretRef"
type GitSource struct {
	// URL of the repository: https://, http://, ssh://, git@host:path or file://.
	// http:// and file:// are refused unless the controller runs with
	// --allow-insecure-module-sources.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url"`
	// Ref is a tag, a branch or a full commit hash. A commit hash is pinned; a tag or a
	// branch is looked up again every --module-source-refresh, so a moved branch reaches
	// the class and, at their next drift check, its Modules.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Ref string `json:"ref"`
	// Path of the module inside the repository.
	// +optional
	Path string `json:"path,omitempty"`
	// SecretRef names a Secret in the same namespace with the repository's credentials.
	// Over HTTPS: username and password (basic auth; a personal access token goes in
	// password), or bearerToken. Over SSH: identity (a private key, PEM or OpenSSH format),
	// known_hosts (required: the server's host key is always checked), and password if
	// the key is encrypted; the user is the URL's (git@...), else "git".
	// +optional
	SecretRef *common.LocalReference `json:"secretRef,omitempty"`
}

// InputMapping copies a claim field, or a label of the cluster the claim's first consumer
// was scheduled to, into a module variable.
// +kubebuilder:validation:XValidation:rule="has(self.fromFieldPath) != has(self.fromClusterLabel)",message="set exactly one of fromFieldPath and fromClusterLabel"
type InputMapping struct {
	// FromFieldPath is a dotted path in the claim, e.g. spec.engineVersion.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$`
	FromFieldPath string `json:"fromFieldPath,omitempty"`
	// FromClusterLabel is a label of the cluster the claim's first consumer was scheduled
	// to (portable classes with bindingMode WaitForFirstConsumer), e.g. region.
	// +optional
	// +kubebuilder:validation:MinLength=1
	FromClusterLabel string `json:"fromClusterLabel,omitempty"`
	// ToVariable is the module variable that receives it.
	// +kubebuilder:validation:MinLength=1
	ToVariable string `json:"toVariable"`
}

// VariableFrom sets one module variable from a key of a Secret or a ConfigMap in the
// resource's namespace, as a container's env takes valueFrom.
type VariableFrom struct {
	// Name is the module variable.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_-]*$`
	Name string `json:"name"`
	// ValueFrom says where the value is.
	ValueFrom VariableSource `json:"valueFrom"`
}

// VariableSource is one key of a Secret or of a ConfigMap. The value is read as terraform
// reads a TF_VAR_ environment variable: a string as it is, numbers and bools converted,
// lists, maps and objects written in HCL or JSON.
// +kubebuilder:validation:XValidation:rule="has(self.secretKeyRef) != has(self.configMapKeyRef)",message="set exactly one of secretKeyRef and configMapKeyRef"
type VariableSource struct {
	// SecretKeyRef is a Secret key: the variable is sensitive, and its value reaches
	// terraform only through the environment, never a file.
	// +optional
	SecretKeyRef *SecretKeySelector `json:"secretKeyRef,omitempty"`
	// ConfigMapKeyRef is a ConfigMap key.
	// +optional
	ConfigMapKeyRef *ConfigMapKeySelector `json:"configMapKeyRef,omitempty"`
}

// ConfigMapKeySelector names one key of a ConfigMap in the referrer's namespace.
type ConfigMapKeySelector struct {
	// Name of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// Key in the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	Key string `json:"key"`
}

// ConnectionMapping sets one connection Secret key: from a module output, to a literal
// value, or from a ProviderConfig the resource uses.
// +kubebuilder:validation:XValidation:rule="(has(self.fromOutput) ? 1 : 0) + (has(self.value) ? 1 : 0) + (has(self.fromProviderConfig) ? 1 : 0) == 1",message="set exactly one of fromOutput, value and fromProviderConfig"
type ConnectionMapping struct {
	// FromOutput is the module output.
	// +optional
	// +kubebuilder:validation:MinLength=1
	FromOutput string `json:"fromOutput,omitempty"`
	// Value is a literal value, e.g. the region every resource of the class is in.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Value *string `json:"value,omitempty"`
	// FromProviderConfig takes the value from a ProviderConfig the resource uses (its
	// providerRef or one of its providerConfigRefs): a setting of its config, or one of
	// its credentials that the ProviderConfig lists in connectionCredentials.
	// +optional
	FromProviderConfig *ProviderConfigValue `json:"fromProviderConfig,omitempty"`
	// ToKey is the connection Secret key, e.g. endpoint.
	// +kubebuilder:validation:MinLength=1
	ToKey string `json:"toKey"`
}

// ProviderConfigValue names one value of a ProviderConfig: a config setting or a credential.
// +kubebuilder:validation:XValidation:rule="has(self.configPath) != has(self.credential)",message="set exactly one of configPath and credential"
type ProviderConfigValue struct {
	// Name of the ProviderConfig, in the resource's namespace; the resource must use it.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// ConfigPath is a dotted path into the ProviderConfig's config, list elements by
	// index, e.g. region or endpoints.0.s3.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`
	ConfigPath string `json:"configPath,omitempty"`
	// Credential is the env of one of the ProviderConfig's credentials, e.g.
	// AWS_ACCESS_KEY_ID. The ProviderConfig must list it in connectionCredentials.
	// +optional
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	Credential string `json:"credential,omitempty"`
}

// ModuleParameters are what a Module runs: the module, its inputs and its providers.
type ModuleParameters struct {
	// Source of the module.
	Source ModuleSource `json:"source"`
	// ProviderConfigRefs name the ProviderConfigs (in the same namespace) to configure.
	// +optional
	ProviderConfigRefs []common.LocalReference `json:"providerConfigRefs,omitempty"`
	// Connection sets the connection Secret's keys from outputs, literal values and
	// ProviderConfig values; empty publishes every output under its own name. With any
	// entry, only the outputs listed are published.
	// +optional
	Connection []ConnectionMapping `json:"connection,omitempty"`
	// VariablesFrom set module variables from Secret or ConfigMap keys in the resource's
	// namespace; a change to such a key is applied at once. Another resource's connection
	// Secret can feed a module this way.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	VariablesFrom []VariableFrom `json:"variablesFrom,omitempty"`
}

// ModuleClassSpecTemplate is what Modules made from the class start with.
type ModuleClassSpecTemplate struct {
	common.ClassSpecTemplate `json:",inline"`
	ModuleParameters         `json:",inline"`
	// ForProvider holds fixed module input values, by variable name.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	ForProvider *apiextensionsv1.JSON `json:"forProvider,omitempty"`
	// Inputs map claim fields to module variables.
	// +optional
	Inputs []InputMapping `json:"inputs,omitempty"`
}

// ModuleVariable describes one variable of the class's module.
type ModuleVariable struct {
	// Name of the variable.
	Name string `json:"name"`
	// Type constraint as written.
	// +optional
	Type string `json:"type,omitempty"`
	// Default as JSON text; empty when required.
	// +optional
	Default string `json:"default,omitempty"`
	// Required is true when there is no default.
	Required bool `json:"required"`
	// Sensitive variables are hidden by Terraform.
	// +optional
	Sensitive bool `json:"sensitive,omitempty"`
	// Description as written.
	// +optional
	Description string `json:"description,omitempty"`
}

// ModuleOutput describes one output of the class's module.
type ModuleOutput struct {
	// Name of the output.
	Name string `json:"name"`
	// Sensitive outputs go only to connection Secrets.
	// +optional
	Sensitive bool `json:"sensitive,omitempty"`
	// Description as written.
	// +optional
	Description string `json:"description,omitempty"`
}

// ModuleClassStatus is what the class's module offers and whether the class is usable.
type ModuleClassStatus struct {
	common.ClassRevisions `json:",inline"`
	// Variables of the module.
	// +optional
	Variables []ModuleVariable `json:"variables,omitempty"`
	// Outputs of the module.
	// +optional
	Outputs []ModuleOutput `json:"outputs,omitempty"`
	// Revision is what the module was read from: a git commit, an OCI digest, or a
	// ConfigMap's resourceVersion.
	// +optional
	Revision string `json:"revision,omitempty"`
	// ProviderLock is the dependency lock (.terraform.lock.hcl) recorded at the first init
	// of the class's module, or taken from an upgrade (providerUpgrade): every Module made
	// from the class starts with these provider versions (each then keeps its own,
	// status.terraform.providerLock, until a revision with another lock reaches it). Empty
	// until a Module of the class has run.
	// +optional
	ProviderLock string `json:"providerLock,omitempty"`
	// ProviderUpgrade is a dependency lock with newer provider versions than the class's
	// resources run, which their plans found their providers' sources offer within the
	// version constraints. The class's next revision carries it, and it rolls out in
	// waves like any other revision; it is then the class's providerLock. Only for a
	// module that ships no lock of its own.
	// +optional
	ProviderUpgrade string `json:"providerUpgrade,omitempty"`
	// Conditions: Ready says whether claims can bind to the class; Reconciling and
	// Stalled as kstatus reads them.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation last applied, or found impossible to apply
	// until someone acts (then Stalled says why). While it is behind metadata.generation
	// the class is Reconciling.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// ModuleClass is any Terraform module used as a non-portable class.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane;class
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="RECLAIM-POLICY",type=string,JSONPath=`.specTemplate.reclaimPolicy`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ModuleClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// AllowedNamespaces lists the namespaces whose portable classes may point at this
	// class; portable classes in its own namespace always may.
	// +optional
	AllowedNamespaces *common.AllowedNamespaces `json:"allowedNamespaces,omitempty"`
	// SpecTemplate is what new Modules start with.
	SpecTemplate ModuleClassSpecTemplate `json:"specTemplate"`
	Status       ModuleClassStatus       `json:"status,omitempty"`
}

// ModuleClassList is a list of ModuleClasses.
// +kubebuilder:object:root=true
type ModuleClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ModuleClass `json:"items"`
}

// ModuleSpec is the desired state of a Module.
type ModuleSpec struct {
	common.ManagedSpec `json:",inline"`
	ModuleParameters   `json:",inline"`
	// ForProvider holds the module's input values, by variable name.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	ForProvider *apiextensionsv1.JSON `json:"forProvider,omitempty"`
}

// Module is a Terraform module run as a managed resource.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane;managed
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.bindingPhase`
// +kubebuilder:printcolumn:name="CLAIM",type=string,JSONPath=`.spec.claimRef.name`
// +kubebuilder:printcolumn:name="CLASS",type=string,JSONPath=`.spec.classRef.name`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=="Synced")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Module struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ModuleSpec            `json:"spec"`
	Status common.ResourceStatus `json:"status,omitempty"`
}

// ModuleList is a list of Modules.
// +kubebuilder:object:root=true
type ModuleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Module `json:"items"`
}

// GetSpecTemplate returns the shared part of the spec template.
func (c *ModuleClass) GetSpecTemplate() *common.ClassSpecTemplate {
	return &c.SpecTemplate.ClassSpecTemplate
}

// GetAllowedNamespaces returns the namespaces whose portable classes may point at this class.
func (c *ModuleClass) GetAllowedNamespaces() *common.AllowedNamespaces { return c.AllowedNamespaces }

// GetClassRevisions returns the class's revisions.
func (c *ModuleClass) GetClassRevisions() *common.ClassRevisions { return &c.Status.ClassRevisions }

// GetClassConditions returns the class's conditions.
func (c *ModuleClass) GetClassConditions() *[]metav1.Condition { return &c.Status.Conditions }

// GetManagedSpec returns the shared managed spec.
func (m *Module) GetManagedSpec() *common.ManagedSpec { return &m.Spec.ManagedSpec }

// GetManagedStatus returns the shared managed status.
func (m *Module) GetManagedStatus() *common.ManagedStatus { return &m.Status.ManagedStatus }

// GetForProvider returns the module inputs.
func (m *Module) GetForProvider() (map[string]any, error) {
	return common.JSONValues(m.Spec.ForProvider)
}

// SetForProvider replaces the module inputs.
func (m *Module) SetForProvider(values map[string]any) error {
	v, err := common.FromValues(values)
	m.Spec.ForProvider = v
	return err
}

// SetAtProvider records the non-sensitive outputs.
func (m *Module) SetAtProvider(outputs map[string]any) error { return m.Status.SetAtProvider(outputs) }
