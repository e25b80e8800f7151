// Package tenancy tests what the roles of the Helm chart allow, against a real API server
// with the ClusterRole aggregation controller: the controller's, the stack manager's and
// those handed to people (claimer, viewer, admin), and the controller and the stack
// manager each running with only its own.
package tenancy

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
		fmt.Println("tenancy: skipped in -short mode")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if env, err = framework.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "tenancy:", err)
		return 1
	}
	defer env.Stop()
	dir, err := os.MkdirTemp("", "terraplane-tenancy-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tenancy:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	stop, err := env.StartRoleAggregation(filepath.Join(dir, "kube-controller-manager.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tenancy:", err)
		return 1
	}
	defer stop()
	return m.Run()
}
