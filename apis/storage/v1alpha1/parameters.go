package v1alpha1

// BucketParameters are the portable fields of a bucket claim.
// +terraplane:claim:kind=Bucket,noun="an object storage bucket"
type BucketParameters struct {
	// Versioning keeps every version of every object.
	// +optional
	Versioning bool `json:"versioning,omitempty"`
	// Tags to put on the bucket.
	// +optional
	// +kubebuilder:validation:MaxProperties=50
	Tags map[string]string `json:"tags,omitempty"`
}
