package v1alpha1

// CloudSQLInstanceParameters are the inputs of the bundled tfmodules/gcp/cloudsql module:
// a Cloud SQL instance, one database and its owner user.
// +terraplane:managed:kind=CloudSQLInstance,noun="a Cloud SQL instance"
type CloudSQLInstanceParameters struct {
	// InstanceName is the instance's name; set from the claim when provisioned
	// dynamically. Google keeps a deleted instance's name for about a week.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]{0,96}[a-z0-9]$`
	// +terraplane:immutable="a new name replaces the instance"
	InstanceName string `json:"instanceName,omitempty"`
	// Engine is POSTGRES or MYSQL; set from the claim's kind when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Enum="";POSTGRES;MYSQL
	// +terraplane:immutable="another engine replaces the instance"
	Engine string `json:"engine,omitempty"`
	// EngineVersion is the major (or major.minor) version, e.g. "16" or "8.0"; empty
	// takes the module's default (PostgreSQL 16, MySQL 8.0).
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	EngineVersion string `json:"engineVersion,omitempty"`
	// Tier is the machine type, e.g. db-custom-1-3840 (the default) or db-f1-micro.
	// +optional
	Tier string `json:"tier,omitempty"`
	// DiskSizeGB is the initial disk size; the disk grows on its own after that.
	// +optional
	// +kubebuilder:validation:Minimum=10
	DiskSizeGB int32 `json:"diskSizeGB,omitempty"`
	// HighAvailability makes the instance REGIONAL: a standby in another zone.
	// +optional
	HighAvailability bool `json:"highAvailability,omitempty"`
	// DatabaseName is the database made on the instance; set from the claim when
	// provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	// +terraplane:immutable="a new name replaces the database"
	DatabaseName string `json:"databaseName,omitempty"`
	// Username of the database's owner, whose generated password goes only to the
	// connection Secret; set from the claim when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,31}$`
	Username string `json:"username,omitempty"`
	// PrivateNetwork is the self link of a VPC network (with private services access)
	// the instance gets a private IP in; empty gives a public IP with no authorized
	// networks (reachable through the Cloud SQL Auth Proxy only).
	// +optional
	PrivateNetwork string `json:"privateNetwork,omitempty"`
	// DeletionProtection refuses to delete the instance, in Google Cloud and in Terraform.
	// +optional
	DeletionProtection bool `json:"deletionProtection,omitempty"`
	// Labels to put on the instance.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}
