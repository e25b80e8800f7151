package kinds

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	awsv1 "terraplane.io/terraplane/apis/aws/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/tfmodules"
)

func s3Bucket() registry.ManagedKind {
	return registry.ManagedKind{
		GVK:             awsstoragev1.GroupVersion.WithKind("S3Bucket"),
		New:             func() resource.Managed { return &awsstoragev1.S3Bucket{} },
		NewList:         func() client.ObjectList { return &awsstoragev1.S3BucketList{} },
		ClassGVK:        awsstoragev1.GroupVersion.WithKind("S3BucketClass"),
		NewClass:        func() resource.NonPortableClass { return &awsstoragev1.S3BucketClass{} },
		ProviderGVK:     awsv1.GroupVersion.WithKind("Provider"),
		Modules:         tfmodules.FS,
		ModuleDir:       "aws/s3bucket",
		ResolveProvider: resolveAWSProvider,
		RecoverCreate:   recoverS3Bucket,
		ConnectionKeys: map[string]string{
			"endpoint":          "endpoint",
			"bucket":            "bucket",
			"region":            "region",
			"access_key_id":     "accessKeyID",
			"secret_access_key": "secretAccessKey",
		},
	}
}

func bucket() registry.ClaimKind {
	return registry.ClaimKind{
		GVK:          storagev1.GroupVersion.WithKind("Bucket"),
		New:          func() resource.Claim { return &storagev1.Bucket{} },
		ClassGVK:     storagev1.GroupVersion.WithKind("BucketClass"),
		NewClass:     func() resource.PortableClass { return &storagev1.BucketClass{} },
		NewClassList: func() client.ObjectList { return &storagev1.BucketClassList{} },
		Configurators: map[schema.GroupVersionKind]registry.Configurator{
			awsstoragev1.GroupVersion.WithKind("S3Bucket"): configureS3Bucket,
		},
	}
}

// configureS3Bucket maps a Bucket claim onto an S3Bucket: the class's forProvider,
// with the claim's versioning and tags on top, and a bucket name derived from the claim.
func configureS3Bucket(req registry.Request, mg resource.Managed) error {
	cl, cls := req.Claim, req.Class
	claim, ok1 := cl.(*storagev1.Bucket)
	class, ok2 := cls.(*awsstoragev1.S3BucketClass)
	bucket, ok3 := mg.(*awsstoragev1.S3Bucket)
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("configure S3Bucket: unexpected types %T, %T, %T", cl, cls, mg)
	}
	p := *class.SpecTemplate.ForProvider.DeepCopy()
	if p.BucketName == "" {
		p.BucketName = BucketName(claim.Namespace, claim.Name, string(claim.UID))
	}
	if claim.Spec.Versioning {
		p.Versioning = true
	}
	if len(claim.Spec.Tags) > 0 && p.Tags == nil {
		p.Tags = map[string]string{}
	}
	for k, v := range claim.Spec.Tags {
		p.Tags[k] = v
	}
	bucket.Spec.ForProvider = p
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
