package v1alpha1

// RDSInstanceParameters are the inputs of the bundled tfmodules/aws/rds module: an RDS
// DB instance with one database, whose generated master password goes only to the
// connection Secret.
// +terraplane:managed:kind=RDSInstance,noun="an RDS database instance"
type RDSInstanceParameters struct {
	// Identifier is the DB instance identifier; set from the claim when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9-]{0,62}$`
	// +terraplane:immutable="a new identifier replaces the instance"
	Identifier string `json:"identifier,omitempty"`
	// Engine is postgres or mysql; set from the claim's kind when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Enum="";postgres;mysql
	// +terraplane:immutable="another engine replaces the instance"
	Engine string `json:"engine,omitempty"`
	// EngineVersion is the major (or major.minor) version, e.g. "16" or "8.0"; empty
	// takes the module's default (PostgreSQL 16, MySQL 8.0).
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)*$`
	EngineVersion string `json:"engineVersion,omitempty"`
	// InstanceClass is the DB instance class; db.t3.micro when unset.
	// +optional
	// +kubebuilder:validation:Pattern=`^db\.[a-z0-9]+\.[a-z0-9]+$`
	InstanceClass string `json:"instanceClass,omitempty"`
	// StorageGB is the allocated storage; 20 (the smallest gp3 volume) when unset.
	// +optional
	// +kubebuilder:validation:Minimum=20
	// +kubebuilder:validation:Maximum=65536
	StorageGB int32 `json:"storageGB,omitempty"`
	// HighAvailability makes the instance Multi-AZ: a standby in another zone.
	// +optional
	HighAvailability bool `json:"highAvailability,omitempty"`
	// Encryption encrypts storage at rest (with the account's default RDS key unless
	// kmsKeyID is set). Always on for dynamically provisioned instances that ask for it.
	// +optional
	// +terraplane:immutable="turning encryption on or off replaces the instance"
	Encryption bool `json:"encryption,omitempty"`
	// KMSKeyID is the ARN of the KMS key that encrypts storage; needs encryption.
	// +optional
	// +terraplane:immutable="another key replaces the instance"
	KMSKeyID string `json:"kmsKeyID,omitempty"`
	// DatabaseName is the database made on the instance; set from the claim when
	// provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9_]{0,62}$`
	// +terraplane:immutable="a new name replaces the instance"
	DatabaseName string `json:"databaseName,omitempty"`
	// Username of the master user, whose generated password goes only to the connection
	// Secret; set from the claim when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-zA-Z][a-zA-Z0-9_]{0,15}$`
	// +terraplane:immutable="a new master user replaces the instance"
	Username string `json:"username,omitempty"`
	// DBSubnetGroupName places the instance in a VPC's subnets; empty takes the default VPC.
	// +optional
	// +terraplane:immutable="another subnet group replaces the instance"
	DBSubnetGroupName string `json:"dbSubnetGroupName,omitempty"`
	// VPCSecurityGroupIDs guard the instance; empty takes the VPC's default group.
	// +optional
	VPCSecurityGroupIDs []string `json:"vpcSecurityGroupIDs,omitempty"`
	// Parameters are database engine parameters by name, e.g. max_connections; set, they
	// go into a DB parameter group made for this instance.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	Parameters map[string]string `json:"parameters,omitempty"`
	// PubliclyAccessible gives the instance a public address.
	// +optional
	PubliclyAccessible bool `json:"publiclyAccessible,omitempty"`
	// FinalSnapshot takes a snapshot named <identifier>-final when the instance is
	// destroyed; without it the data goes with the instance.
	// +optional
	FinalSnapshot bool `json:"finalSnapshot,omitempty"`
	// DeletionProtection refuses to delete the instance, in AWS and in Terraform.
	// +optional
	DeletionProtection bool `json:"deletionProtection,omitempty"`
	// Tags to put on the instance.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}
