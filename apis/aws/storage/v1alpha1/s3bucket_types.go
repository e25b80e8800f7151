package v1alpha1

// S3BucketParameters are the inputs of the bundled tfmodules/aws/s3bucket module.
// +terraplane:managed:kind=S3Bucket,noun="an S3 bucket"
type S3BucketParameters struct {
	// BucketName is the bucket's name; set from the claim when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`
	// +terraplane:immutable="a new name replaces the bucket"
	BucketName string `json:"bucketName,omitempty"`
	// Versioning keeps every version of every object.
	// +optional
	Versioning bool `json:"versioning,omitempty"`
	// Encryption is the server-side encryption algorithm; empty leaves the server's default.
	// +optional
	// +kubebuilder:validation:Enum="";AES256;"aws:kms"
	Encryption string `json:"encryption,omitempty"`
	// ForceDestroy deletes the objects in the bucket when the bucket is destroyed.
	// +optional
	ForceDestroy bool `json:"forceDestroy,omitempty"`
	// Tags to put on the bucket.
	// +optional
	Tags map[string]string `json:"tags,omitempty"`
	// CreateAccessKey makes an IAM user and access key limited to this bucket (AWS only),
	// handed out in the connection Secret. Without it the Secret carries no keys, unless
	// the Provider hands out its own (connectionCredentials: Provider, e.g. for MinIO).
	// +optional
	CreateAccessKey bool `json:"createAccessKey,omitempty"`
}
