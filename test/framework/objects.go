package framework

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
)

// CredentialsSecret holds S3 credentials in the keys an aws Provider reads.
func CredentialsSecret(ns, name, accessKey, secretKey string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		StringData: map[string]string{
			awsv1.CredentialsAccessKeyID:     accessKey,
			awsv1.CredentialsSecretAccessKey: secretKey,
		},
	}
}

// S3Provider is an aws Provider for an S3-compatible endpoint such as MinIO, whose
// keys bucket claims receive (MinIO has no IAM to make keys per bucket).
func S3Provider(ns, name, secret, endpoint string) *awsv1.Provider {
	return &awsv1.Provider{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: awsv1.ProviderSpec{
			Region:                    "us-east-1",
			CredentialsSecretRef:      &awsv1.CredentialsSecretReference{Name: secret},
			ConnectionCredentials:     awsv1.ConnectionCredentialsProvider,
			Endpoint:                  endpoint,
			S3UsePathStyle:            true,
			SkipCredentialsValidation: true,
			SkipRequestingAccountID:   true,
			SkipMetadataAPICheck:      true,
			SkipRegionValidation:      true,
		},
	}
}

// S3BucketClass is a non-portable bucket class using provider, which portable classes in
// the namespaces allowed may point at (besides those in ns).
func S3BucketClass(ns, name, provider string, policy common.ReclaimPolicy, allowed ...string) *awsstoragev1.S3BucketClass {
	return &awsstoragev1.S3BucketClass{
		ObjectMeta:        metav1.ObjectMeta{Namespace: ns, Name: name},
		AllowedNamespaces: Allow(allowed...),
		SpecTemplate: awsstoragev1.S3BucketClassSpecTemplate{
			ClassSpecTemplate: common.ClassSpecTemplate{ProviderRef: &common.LocalReference{Name: provider}, ReclaimPolicy: policy},
			ForProvider:       awsstoragev1.S3BucketParameters{ForceDestroy: true},
		},
	}
}

// Allow is the consent of a class or resource to references from namespaces (none: nil).
func Allow(namespaces ...string) *common.AllowedNamespaces {
	if len(namespaces) == 0 {
		return nil
	}
	return &common.AllowedNamespaces{Names: namespaces}
}

// BucketClass is a portable class pointing at an S3BucketClass; isDefault labels it the namespace default.
func BucketClass(ns, name string, target *awsstoragev1.S3BucketClass, isDefault bool) *storagev1.BucketClass {
	c := &storagev1.BucketClass{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		ClassRef: common.ClassReference{
			APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3BucketClass",
			Name: target.Name, Namespace: target.Namespace,
		},
	}
	if isDefault {
		c.Labels = map[string]string{common.DefaultClassLabel: "true"}
	}
	return c
}

// Bucket is a Bucket claim; class may be empty to use the default.
func Bucket(ns, name, class, secret string) *storagev1.Bucket {
	b := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if class != "" {
		b.Spec.ClassRef = &common.LocalReference{Name: class}
	}
	if secret != "" {
		b.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: secret}
	}
	return b
}
