package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
	"terraplane.io/terraplane/tfmodules"
)

// awsVariant is the real-provider variant: the bundled S3 kind on a MinIO the bench
// starts, with hashicorp/aws doing the work on both sides.
const awsVariant = "aws-s3"

const minioUser, minioPassword = "bench-admin", "bench-admin-secret"

// startMinIO starts the MinIO the aws variant's buckets live in, and creates the aws
// Provider, S3BucketClass and portable BucketClass the claims use.
func (h *harness) startMinIO(ctx context.Context) error {
	m, err := devenv.StartMinIO(ctx, filepath.Join(h.work, "minio"), 0, minioUser, minioPassword)
	if err != nil {
		return err
	}
	h.minio = m
	s3 := framework.S3BucketClass(adminNS, awsVariant, "minio", common.ReclaimDelete, appNS)
	for _, o := range []client.Object{
		framework.CredentialsSecret(adminNS, "minio-creds", minioUser, minioPassword),
		framework.S3Provider(adminNS, "minio", "minio-creds", m.Endpoint),
		s3,
		framework.BucketClass(appNS, awsVariant, s3, false),
	} {
		if err := h.c.Create(ctx, o); err != nil {
			return fmt.Errorf("create %s: %w", o.GetName(), err)
		}
	}
	return nil
}

// rawAWSFiles writes the raw side's workspace for one bucket: the bundled module, called
// with the settings the bundled kind gives it, and an aws provider configured as the
// Provider above renders it.
func (h *harness) rawAWSFiles(dir, bucket string) (map[string]string, []string, error) {
	sub, err := fs.Sub(tfmodules.FS, "aws/s3bucket")
	if err != nil {
		return nil, nil, err
	}
	if err := os.CopyFS(filepath.Join(dir, "s3bucket"), sub); err != nil && !os.IsExist(err) {
		return nil, nil, fmt.Errorf("copy the s3bucket module: %w", err)
	}
	root := map[string]any{
		"provider": h.awsProvider(),
		"module": map[string]any{"this": map[string]any{
			"source": "./s3bucket", "bucket_name": bucket, "force_destroy": true, "endpoint_url": h.minio.Endpoint,
		}},
	}
	main, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	env := []string{"AWS_ACCESS_KEY_ID=" + minioUser, "AWS_SECRET_ACCESS_KEY=" + minioPassword}
	return map[string]string{"main.tf.json": string(main)}, env, nil
}

// awsProvider is the aws provider block of the yardsticks, as the Provider above renders it.
func (h *harness) awsProvider() map[string]any {
	return map[string]any{"aws": map[string]any{
		"region": "us-east-1", "s3_use_path_style": true, "skip_credentials_validation": true,
		"skip_requesting_account_id": true, "skip_metadata_api_check": true, "skip_region_validation": true,
		"endpoints": []any{map[string]any{"s3": h.minio.Endpoint}},
	}}
}
