// Package install tests Terraplane as a platform team installs it: the container image
// (built, pushed to a registry, pulled back and run from its root file system), the Helm
// chart and the kustomize configuration (admitted under the restricted Pod Security
// level by a real API server), the runtime endpoints, and providers from a network mirror.
package install

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"terraplane.io/terraplane/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("install: skipped in -short mode")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if env, err = framework.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "install:", err)
		return 1
	}
	defer env.Stop()
	defer stopNode()
	defer func() {
		if binary != "" {
			_ = os.RemoveAll(filepath.Dir(binary))
		}
	}()
	return m.Run()
}
