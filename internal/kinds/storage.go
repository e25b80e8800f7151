package kinds

import (
	"maps"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/tfmodules"
)

// s3Bucket is an S3 bucket (tfmodules/aws/s3bucket) meeting Bucket claims. Without
// createAccessKey its Secret carries no keys, unless its Provider hands out its own
// (connectionCredentials: Provider, for S3-compatible servers without IAM such as MinIO).
func s3Bucket() registry.ManagedKind {
	return registry.ManagedKind{
		GVK:         awsstoragev1.S3BucketGroupVersionKind,
		ClassGVK:    awsstoragev1.S3BucketClassGroupVersionKind,
		ProviderGVK: awsv1.ProviderGroupVersionKind,
		Meets:       map[schema.GroupVersionKind]registry.Configurator{BucketGVK: configurator(configureS3Bucket)},
		Terraform: &registry.TerraformKind{
			Modules:         tfmodules.FS,
			ModuleDir:       "aws/s3bucket",
			ResolveProvider: resolveAWSProvider,
			RecoverCreate:   recoverS3Bucket,
			ConnectionKeys: map[string]string{
				"endpoint": "endpoint", "bucket": "bucket", "region": "region",
				"access_key_id": "accessKeyID", "secret_access_key": "secretAccessKey",
			},
			ProviderConnectionKeys: []string{awsv1.CredentialsAccessKeyID, awsv1.CredentialsSecretAccessKey},
		},
	}
}

// BucketGVK is the portable bucket claim kind.
var BucketGVK = storagev1.GroupVersion.WithKind("Bucket")

func bucket() registry.ClaimKind {
	return registry.ClaimKind{GVK: BucketGVK, ClassGVK: storagev1.GroupVersion.WithKind("BucketClass")}
}

// configureS3Bucket maps a Bucket claim onto an S3Bucket: the claim's versioning and tags
// on top of the class's forProvider, and a bucket name derived from the claim.
func configureS3Bucket(claim *storagev1.Bucket, _ *awsstoragev1.S3BucketClass, b *awsstoragev1.S3Bucket) error {
	p := &b.Spec.ForProvider
	if p.BucketName == "" {
		p.BucketName = BucketName(claim.Namespace, claim.Name, string(claim.UID))
	}
	p.Versioning = p.Versioning || claim.Spec.Versioning
	if len(claim.Spec.Tags) > 0 && p.Tags == nil {
		p.Tags = map[string]string{}
	}
	maps.Copy(p.Tags, claim.Spec.Tags)
	return nil
}

var notBucketChars = regexp.MustCompile(`[^a-z0-9-]+`)

// BucketName derives a valid, unique S3 bucket name (3–63 characters) from a claim.
func BucketName(namespace, name, uid string) string {
	base := notBucketChars.ReplaceAllString(strings.ToLower(namespace+"-"+name), "-")
	suffix := strings.ReplaceAll(uid, "-", "")
	if len(suffix) > 8 {
		suffix = suffix[:8]
	}
	if max := 63 - len(suffix) - 1; len(base) > max {
		base = base[:max]
	}
	return strings.Trim(base, "-") + "-" + suffix
}
