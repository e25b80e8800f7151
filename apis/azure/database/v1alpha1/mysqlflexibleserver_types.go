package v1alpha1

// MySQLFlexibleServerParameters are the inputs of the bundled
// tfmodules/azure/mysqlflexible module: an Azure Database for MySQL flexible server
// and one database on it.
// +terraplane:managed:kind=MySQLFlexibleServer,noun="an Azure Database for MySQL flexible server"
type MySQLFlexibleServerParameters struct {
	// ServerName is the server's globally unique name; set from the claim when
	// provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`
	// +terraplane:immutable="a new name replaces the server"
	ServerName string `json:"serverName,omitempty"`
	// ResourceGroupName is an existing resource group to put the server in; empty makes
	// a resource group of its own, named after the server.
	// +optional
	// +terraplane:immutable="another resource group replaces the server"
	ResourceGroupName string `json:"resourceGroupName,omitempty"`
	// EngineVersion of MySQL, e.g. "8.0.21"; empty takes the module's default (MySQL 8.0.21).
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+\.[0-9]+(\.[0-9]+)?$`
	EngineVersion string `json:"engineVersion,omitempty"`
	// SkuName is the compute size, e.g. B_Standard_B1ms (the default, Burstable) or
	// GP_Standard_D2ds_v5. Burstable sizes cannot have high availability.
	// +optional
	SkuName string `json:"skuName,omitempty"`
	// StorageGB is the storage size; 20 when unset.
	// +optional
	// +kubebuilder:validation:Minimum=20
	StorageGB int32 `json:"storageGB,omitempty"`
	// HighAvailability adds a zone-redundant standby that takes over on failure.
	// +optional
	HighAvailability bool `json:"highAvailability,omitempty"`
	// AdministratorLogin is the server's administrator, whose generated password goes
	// only to the connection Secret; terraplane when unset.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z][a-z0-9_]{0,62}$`
	// +terraplane:immutable="a new administrator replaces the server"
	AdministratorLogin string `json:"administratorLogin,omitempty"`
	// DatabaseName is the database made on the server; set from the claim when
	// provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z_][a-z0-9_]{0,62}$`
	// +terraplane:immutable="a new name replaces the database"
	DatabaseName string `json:"databaseName,omitempty"`
	// DelegatedSubnetID is a subnet delegated to MySQL flexible servers, for private
	// access; empty gives public access with no firewall rule (no client gets in until
	// one is added).
	// +optional
	// +terraplane:immutable="another network replaces the server"
	DelegatedSubnetID string `json:"delegatedSubnetID,omitempty"`
	// PrivateDNSZoneID is the private DNS zone that resolves the server's name, with
	// delegatedSubnetID.
	// +optional
	// +terraplane:immutable="another network replaces the server"
	PrivateDNSZoneID string `json:"privateDNSZoneID,omitempty"`
	// Tags to put on the server (and its resource group, when it makes one).
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}
