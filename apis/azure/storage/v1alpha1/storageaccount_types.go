package v1alpha1

// StorageAccountParameters are the inputs of the bundled tfmodules/azure/storageaccount
// module: a storage account holding one private blob container.
// +terraplane:managed:kind=StorageAccount,noun="an Azure storage account with one blob container"
type StorageAccountParameters struct {
	// AccountName is the account's globally unique name, 3 to 24 lowercase letters and
	// digits; set from the claim when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9]{3,24}$`
	// +terraplane:immutable="a new name replaces the account"
	AccountName string `json:"accountName,omitempty"`
	// ResourceGroupName is an existing resource group to put the account in; empty makes
	// a resource group of its own, named after the account.
	// +optional
	// +terraplane:immutable="another resource group replaces the account"
	ResourceGroupName string `json:"resourceGroupName,omitempty"`
	// ContainerName is the blob container's name; data when unset.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([a-z0-9-]{1,61}[a-z0-9])?$`
	// +terraplane:immutable="a new name replaces the container"
	ContainerName string `json:"containerName,omitempty"`
	// ReplicationType is how the data is copied: LRS (the default), ZRS, GRS, RAGRS,
	// GZRS or RAGZRS.
	// +optional
	// +kubebuilder:validation:Enum="";LRS;ZRS;GRS;RAGRS;GZRS;RAGZRS
	ReplicationType string `json:"replicationType,omitempty"`
	// Versioning keeps every version of every blob.
	// +optional
	Versioning bool `json:"versioning,omitempty"`
	// CreateAccessKey hands out the account's primary access key (which reaches only
	// this account, so only this container) in the connection Secret as accountKey.
	// +optional
	CreateAccessKey bool `json:"createAccessKey,omitempty"`
	// Tags to put on the account (and its resource group, when it makes one).
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
}
