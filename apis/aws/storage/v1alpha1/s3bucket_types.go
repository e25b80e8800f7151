package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// S3BucketParameters are the inputs of the bundled tfmodules/aws/s3bucket module.
type S3BucketParameters struct {
	// BucketName is the bucket's name; set from the claim when provisioned dynamically.
	// +optional
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`
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
	// CreateAccessKey makes an IAM user and access key limited to this bucket (AWS only).
	// Without it the connection Secret carries the Provider's credentials.
	// +optional
	CreateAccessKey bool `json:"createAccessKey,omitempty"`
}

// S3BucketClassSpecTemplate is what S3Buckets made from the class start with.
type S3BucketClassSpecTemplate struct {
	common.ClassSpecTemplate `json:",inline"`
	// ForProvider holds the module inputs new buckets start with.
	// +optional
	ForProvider S3BucketParameters `json:"forProvider,omitempty"`
}

// S3BucketClass is a non-portable class of S3 buckets.
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=terraplane;class
// +kubebuilder:printcolumn:name="PROVIDER",type=string,JSONPath=`.specTemplate.providerRef.name`
// +kubebuilder:printcolumn:name="RECLAIM-POLICY",type=string,JSONPath=`.specTemplate.reclaimPolicy`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type S3BucketClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// SpecTemplate is what new S3Buckets start with.
	SpecTemplate S3BucketClassSpecTemplate `json:"specTemplate"`
}

// S3BucketClassList is a list of S3BucketClasses.
// +kubebuilder:object:root=true
type S3BucketClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []S3BucketClass `json:"items"`
}

// S3BucketSpec is the desired state of an S3 bucket.
type S3BucketSpec struct {
	common.ManagedSpec `json:",inline"`
	// ForProvider holds the module inputs.
	// +kubebuilder:validation:XValidation:rule="(has(self.bucketName) ? self.bucketName : '') == (has(oldSelf.bucketName) ? oldSelf.bucketName : '')",message="forProvider.bucketName is immutable: a new name replaces the bucket; create a new claim or resource instead"
	ForProvider S3BucketParameters `json:"forProvider"`
}

// S3BucketStatus is the observed state of an S3 bucket.
type S3BucketStatus struct {
	common.ManagedStatus `json:",inline"`
	// AtProvider holds the module's non-sensitive outputs.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Type=object
	AtProvider *apiextensionsv1.JSON `json:"atProvider,omitempty"`
}

// S3Bucket is an S3 bucket managed through Terraform.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=terraplane;managed
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=`.status.bindingPhase`
// +kubebuilder:printcolumn:name="CLAIM",type=string,JSONPath=`.spec.claimRef.name`
// +kubebuilder:printcolumn:name="CLASS",type=string,JSONPath=`.spec.classRef.name`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="SYNCED",type=string,JSONPath=`.status.conditions[?(@.type=="Synced")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type S3Bucket struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   S3BucketSpec   `json:"spec"`
	Status S3BucketStatus `json:"status,omitempty"`
}

// S3BucketList is a list of S3Buckets.
// +kubebuilder:object:root=true
type S3BucketList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []S3Bucket `json:"items"`
}

// GetSpecTemplate returns the shared part of the spec template.
func (c *S3BucketClass) GetSpecTemplate() *common.ClassSpecTemplate {
	return &c.SpecTemplate.ClassSpecTemplate
}

// GetManagedSpec returns the shared managed spec.
func (b *S3Bucket) GetManagedSpec() *common.ManagedSpec { return &b.Spec.ManagedSpec }

// GetManagedStatus returns the shared managed status.
func (b *S3Bucket) GetManagedStatus() *common.ManagedStatus { return &b.Status.ManagedStatus }

// GetForProvider returns the module inputs.
func (b *S3Bucket) GetForProvider() (map[string]any, error) {
	return common.ToValues(b.Spec.ForProvider)
}

// SetForProvider replaces the module inputs.
func (b *S3Bucket) SetForProvider(values map[string]any) error {
	return common.SetValues(values, &b.Spec.ForProvider)
}

// SetAtProvider records the non-sensitive outputs.
func (b *S3Bucket) SetAtProvider(outputs map[string]any) error {
	v, err := common.FromValues(outputs)
	b.Status.AtProvider = v
	return err
}
