package sharding

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"terraplane.io/terraplane/test/framework"
)

var (
	env *framework.Env
	bin string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("sharding: skipped in -short mode")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "terraplane-sharding-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "sharding:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if bin, err = framework.BuildTerraplane(dir); err != nil {
		fmt.Fprintln(os.Stderr, "sharding:", err)
		return 1
	}
	if env, err = framework.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "sharding:", err)
		return 1
	}
	defer env.Stop()
	return m.Run()
}
