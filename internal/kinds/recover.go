package kinds

import (
	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// recoverS3Bucket adopts what an interrupted create of a named bucket may have made:
// the bucket by its name, and the IAM user, whose name derives from it. The bucket's
// versioning and encryption settings are applied again as they are idempotent. A
// bucket without a name (AWS picks one) has no fixed identity, so the user decides.
func recoverS3Bucket(mg resource.Managed, _ *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	b, ok := mg.(*awsstoragev1.S3Bucket)
	if !ok || b.Spec.ForProvider.BucketName == "" {
		return nil, false
	}
	name := b.Spec.ForProvider.BucketName
	imports := []common.ImportInstruction{{Address: "aws_s3_bucket.this", ID: name}}
	if b.Spec.ForProvider.CreateAccessKey {
		user := "s3-" + name
		imports = append(imports, common.ImportInstruction{Address: "aws_iam_user.this[0]", ID: user[:min(len(user), 64)]})
	}
	return imports, true
}

// rerunCreate recovers kinds whose module's create converges when run again: the
// database modules create the database and role only if they are missing.
func rerunCreate(resource.Managed, *registry.ProviderConfig) ([]common.ImportInstruction, bool) {
	return nil, true
}

// recoverFunc is a kind's RecoverCreate.
type recoverFunc = func(resource.Managed, *registry.ProviderConfig) ([]common.ImportInstruction, bool)
