// Package integration tests the claim/class rules against a real API server with the
// real controllers: defaulting, dynamic and static binding, refusals, reclaim and bad input.
// No Provider here resolves, so terraform never runs.
package integration

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

var env *framework.Env

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("integration: skipped in -short mode")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if env, err = framework.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	defer env.Stop()
	dir, err := os.MkdirTemp("", "terraplane-int-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	mgr, err := env.StartManager(dir, app.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		return 1
	}
	defer mgr.Stop()
	return m.Run()
}
