package devenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// TestEphemeralControlPlaneKeepsNothing starts a control plane as `terraplane dev
// --ephemeral` does, with no data directory: etcd keeps its data in a directory of its
// own, which Stop removes, so nothing outlives the run. (A data directory given is kept:
// TestDevKeepsItsData in cmd/terraplane restarts from one.)
func TestEphemeralControlPlaneKeepsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	cp, err := StartControlPlaneWith(ControlPlaneOptions{Kubeconfig: filepath.Join(t.TempDir(), "kubeconfig")})
	if err != nil {
		t.Fatal(err)
	}
	dir := cp.env.ControlPlane.Etcd.DataDir // envtest's own; Stop forgets it
	cp.Stop()
	_, statErr := os.Stat(dir)
	type dataDir struct{ Made, Kept bool }
	if diff := cmp.Diff(dataDir{Made: true}, dataDir{Made: dir != "", Kept: statErr == nil}); diff != "" {
		t.Errorf("etcd's data directory %q (-want +got):\n%s", dir, diff)
	}
}

// TestFeatureGatesReachTheAPIServer: the options' feature gates become kube-apiserver's
// --feature-gates, and none are set without them.
func TestFeatureGatesReachTheAPIServer(t *testing.T) {
	for _, gates := range []string{"", "DetectCacheInconsistency=false"} {
		env := &envtest.Environment{}
		if err := (ControlPlaneOptions{FeatureGates: gates}).configure(env); err != nil {
			t.Fatal(err)
		}
		got := env.ControlPlane.GetAPIServer().Configure().Get("feature-gates").Get(nil)
		if gates == "" && len(got) != 0 || gates != "" && (len(got) != 1 || got[0] != gates) {
			t.Errorf("options %q: --feature-gates = %v", gates, got)
		}
	}
}
