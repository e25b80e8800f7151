package v1alpha1

// DatabaseParameters are the portable fields of a database claim.
// +terraplane:claim:kind=PostgreSQLInstance,noun="a PostgreSQL database"
// +terraplane:claim:kind=MySQLInstance,noun="a MySQL database"
// +kubebuilder:validation:XValidation:rule="!has(self.highAvailability) || !self.highAvailability || !has(self.storageGB) || self.storageGB >= 10",message="highAvailability needs storageGB >= 10"
type DatabaseParameters struct {
	// EngineVersion is the major (or major.minor) server version, e.g. "15" or "10.11".
	// It cannot change after creation.
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="engineVersion is immutable; create a new claim to change versions"
	EngineVersion string `json:"engineVersion,omitempty"`
	// StorageGB is the storage the database needs.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65536
	StorageGB int32 `json:"storageGB,omitempty"`
	// HighAvailability asks for a standby that takes over on failure.
	// +optional
	HighAvailability bool `json:"highAvailability,omitempty"`
	// Encryption asks for encryption at rest.
	// +optional
	Encryption bool `json:"encryption,omitempty"`
}
