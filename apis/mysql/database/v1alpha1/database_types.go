package v1alpha1

// DatabaseParameters are the inputs of the bundled tfmodules/mysql/database module.
// +terraplane:managed:kind=Database,noun="a MySQL database"
type DatabaseParameters struct {
	// DatabaseName is the database to create; set from the claim when provisioned dynamically.
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	// +optional
	// +terraplane:immutable="a new name replaces the database"
	DatabaseName string `json:"databaseName,omitempty"`
	// RoleName is the login role that owns the database; set from the claim when provisioned dynamically.
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,31}$`
	// +optional
	// +terraplane:immutable="a new name replaces the database and its user"
	RoleName string `json:"roleName,omitempty"`
	// EngineVersion is the server's major version this class offers, e.g. "10.11". Claims
	// asking for another version are refused, and the module checks the server at create time.
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	// +optional
	EngineVersion string `json:"engineVersion,omitempty"`
	// ConnectionLimit caps the role's connections; -1 means no limit.
	// +kubebuilder:validation:Minimum=-1
	// +optional
	ConnectionLimit *int32 `json:"connectionLimit,omitempty"`
}
