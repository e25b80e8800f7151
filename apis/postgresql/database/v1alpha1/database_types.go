package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// DatabaseParameters are the inputs of the bundled tfmodules/postgresql/database module.
type DatabaseParameters struct {
	// DatabaseName is the database to create; set from the claim when provisioned dynamically.
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	// +optional
	DatabaseName string `json:"databaseName,omitempty"`
	// RoleName is the login role that owns the database; set from the claim when provisioned dynamically.
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,31}$`
	// +optional
	RoleName string `json:"roleName,omitempty"`
	// EngineVersion is the server's major version this class offers, e.g. "15". Claims
	// asking for another version are refused, and the module checks the server at create time.
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +optional
	EngineVersion string `json:"engineVersion,omitempty"`
	// ConnectionLimit caps the role's connections; -1 means no limit.
	// +kubebuilder:validation:Minimum=-1
	// +optional
	ConnectionLimit *int32 `json:"connectionLimit,omitempty"`
}

// DatabaseClassSpecTemplate is what Databases made from the class start with.
type DatabaseClassSpecTemplate struct {
	common.ClassSpecTemplate `json:",inline"`
	// ForProvider holds the module inputs new databases start with.
	// +optional
	ForProvider DatabaseParameters `json:"forProvider,omitempty"`
}

// DatabaseClass is a non-portable class of PostgreSQL databases.
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=terraplane;class
// +kubebuilder:printcolumn:name="PROVIDER",type=string,JSONPath=`.specTemplate.providerRef.name`
// +kubebuilder:printcolumn:name="RECLAIM-POLICY",type=string,JSONPath=`.specTemplate.reclaimPolicy`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type DatabaseClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// SpecTemplate is what new Databases start with.
	SpecTemplate DatabaseClassSpecTemplate `json:"specTemplate"`
}

// DatabaseClassList is a list of DatabaseClasses.
// +kubebuilder:object:root=true
type DatabaseClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []DatabaseClass `json:"items"`
}

// DatabaseSpec is the desired state of a PostgreSQL database.
type DatabaseSpec struct {
	common.ManagedSpec `json:",inline"`
	// ForProvider holds the module inputs.
	// +kubebuilder:validation:XValidation:rule="(has(self.databaseName) ? self.databaseName : '') == (has(oldSelf.databaseName) ? oldSelf.databaseName : '')",message="forProvider.databaseName is immutable: a new name replaces the database; create a new claim or resource instead"
	// +kubebuilder:validation:XValidation:rule="(has(self.roleName) ? self.roleName : '') == (has(oldSelf.roleName) ? oldSelf.roleName : '')",message="forProvider.roleName is immutable: a new name replaces the database and its role; create a new claim or resource instead"
	ForProvider DatabaseParameters `json:"forProvider"`
}

// DatabaseStatus is the observed state of a PostgreSQL database.
type DatabaseStatus struct {
	common.ManagedStatus `json:",inline"`
	// AtProvider holds the module's non-sensitive outputs.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	AtProvider *apiextensionsv1.JSON `json:"atProvider,omitempty"`
}

// Database is a PostgreSQL database managed through Terraform.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane;managed
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.bindingPhase`
// +kubebuilder:printcolumn:name="CLAIM",type=string,JSONPath=`.spec.claimRef.name`
// +kubebuilder:printcolumn:name="CLASS",type=string,JSONPath=`.spec.classRef.name`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=="Synced")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Database struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DatabaseSpec   `json:"spec"`
	Status DatabaseStatus `json:"status,omitempty"`
}

// DatabaseList is a list of Databases.
// +kubebuilder:object:root=true
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Database `json:"items"`
}

// GetSpecTemplate returns the shared part of the spec template.
func (c *DatabaseClass) GetSpecTemplate() *common.ClassSpecTemplate {
	return &c.SpecTemplate.ClassSpecTemplate
}

// GetManagedSpec returns the shared managed spec.
func (d *Database) GetManagedSpec() *common.ManagedSpec { return &d.Spec.ManagedSpec }

// GetManagedStatus returns the shared managed status.
func (d *Database) GetManagedStatus() *common.ManagedStatus { return &d.Status.ManagedStatus }

// GetForProvider returns the module inputs.
func (d *Database) GetForProvider() (map[string]any, error) {
	return common.ToValues(d.Spec.ForProvider)
}

// SetForProvider replaces the module inputs.
func (d *Database) SetForProvider(values map[string]any) error {
	return common.SetValues(values, &d.Spec.ForProvider)
}

// SetAtProvider records the non-sensitive outputs.
func (d *Database) SetAtProvider(outputs map[string]any) error {
	v, err := common.FromValues(outputs)
	d.Status.AtProvider = v
	return err
}
