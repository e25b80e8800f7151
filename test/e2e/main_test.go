// Package e2e runs Terraplane the way a user does: a real API server, the real
// controllers driving the real terraform with the real hashicorp/aws provider, and a
// real MinIO as the S3 endpoint, checked through the S3 API.
package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
)

var (
	env         *framework.Env
	minioServer *devenv.MinIO
)

const (
	minioUser     = "e2e-admin"
	minioPassword = "e2e-admin-secret-key"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped in -short mode")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	version, err := framework.TerraformVersion()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	fmt.Printf("e2e: driving %s (%s)\n", framework.TerraformBinary(), version)
	if env, err = framework.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer env.Stop()
	defer func() {
		if cliDir != "" {
			_ = os.RemoveAll(cliDir)
		}
	}()
	// The admin namespace every test shares (stack installs default into it too), so
	// that any test runs on its own.
	if err := env.Namespace(context.Background(), adminNS); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "terraplane-e2e-minio-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if minioServer, err = devenv.StartMinIO(context.Background(), filepath.Join(dir, "data"), 0, minioUser, minioPassword); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err, "(MinIO comes from `make tools-test`)")
		return 1
	}
	defer minioServer.Stop()
	return m.Run()
}
