package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"terraplane.io/terraplane/internal/devenv"
)

// StartRoleAggregation runs kube-controller-manager against the Env's API server with
// only its ClusterRole aggregation controller, which fills in the rules of ClusterRoles
// that have an aggregationRule (edit, view, admin and the chart's terraplane-* roles), as
// in a cluster. Its log goes to logPath; stop ends it.
func (e *Env) StartRoleAggregation(logPath string) (stop func(), err error) {
	bin := filepath.Join(devenv.BinDir(), "kube-controller-manager")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("kube-controller-manager is not in %s: run `hack/install-tools.sh kube-controller-manager`", devenv.BinDir())
	}
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--kubeconfig", e.ControlPlane.Kubeconfig, "--controllers=clusterrole-aggregation",
		"--leader-elect=false", "--secure-port=0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start kube-controller-manager: %w", err)
	}
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		log.Close()
	}, nil
}
