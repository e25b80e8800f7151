package v1alpha1

// CloudStorageBucketParameters are the inputs of the bundled tfmodules/gcp/storagebucket module.
// +terraplane:managed:kind=CloudStorageBucket,noun="a Cloud Storage bucket"
type CloudStorageBucketParameters struct {
	// BucketName is the bucket's globally unique name; set from the claim when
	// provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9_.-]{1,61}[a-z0-9]$`
	// +terraplane:immutable="a new name replaces the bucket"
	BucketName string `json:"bucketName,omitempty"`
	// Location is a region, dual-region or multi-region (EU, US); empty takes the
	// Provider's region.
	// +optional
	// +terraplane:immutable="a new location replaces the bucket"
	Location string `json:"location,omitempty"`
	// StorageClass is the default storage class of new objects.
	// +optional
	// +kubebuilder:validation:Enum="";STANDARD;NEARLINE;COLDLINE;ARCHIVE
	StorageClass string `json:"storageClass,omitempty"`
	// Versioning keeps every version of every object.
	// +optional
	Versioning bool `json:"versioning,omitempty"`
	// ForceDestroy deletes the objects in the bucket when the bucket is destroyed.
	// +optional
	ForceDestroy bool `json:"forceDestroy,omitempty"`
	// Labels to put on the bucket (lowercase keys and values).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// CreateAccessKey makes a service account that may use only this bucket's objects,
	// and an HMAC key of it for the S3-compatible XML API, handed out in the connection
	// Secret as accessKeyID and secretAccessKey.
	// +optional
	CreateAccessKey bool `json:"createAccessKey,omitempty"`
}
