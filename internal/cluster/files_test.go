package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteConfigs: every component's configuration is written under the cluster's
// directory, readable only by its owner, and components find it where they are told to.
func TestWriteConfigs(t *testing.T) {
	o := testOptions(t)
	if err := writeConfigs(o); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{o.path("config", "containerd.toml"), o.path("cni", "net.d", "10-terraplane.conflist"),
		o.path("config", "kubelet.yaml"), o.path("config", "kube-proxy.yaml")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
			t.Errorf("%s: mode %v, %d bytes", p, fi.Mode().Perm(), fi.Size())
		}
	}
	for _, c := range components(o) {
		for _, a := range c.args {
			if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(v, o.path("config")) {
				if _, err := os.Stat(v); err != nil {
					t.Errorf("%s is told to read %s, which writeConfigs did not write", c.name, v)
				}
			}
		}
	}
}

// TestContainerdConfig: containerd keeps everything under the cluster's directory, and
// uses the pause image the node imports and the CNI plugins given.
func TestContainerdConfig(t *testing.T) {
	o := testOptions(t)
	lines := map[string]bool{}
	for _, l := range strings.Split(containerdConfig(o), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	for _, want := range []string{
		`root = "` + o.path("containerd", "root") + `"`,
		`state = "` + o.path("containerd", "state") + `"`,
		`address = "` + o.socket() + `"`,
		`sandbox_image = "` + PauseImage + `"`,
		`bin_dir = "` + o.CNIBin + `"`,
		`conf_dir = "` + o.path("cni", "net.d") + `"`,
		`Root = "` + o.path("containerd", "runc") + `"`,
		`restrict_oom_score_adj = true`,
	} {
		if !lines[want] {
			t.Errorf("containerd.toml lacks the line %s", want)
		}
	}
}

// TestCheckToolsNamesWhatIsMissing: with no binaries, the error lists them and names the
// make target that installs them.
func TestCheckToolsNamesWhatIsMissing(t *testing.T) {
	if os.Geteuid() != 0 {
		if err := checkTools(Options{}); err == nil || !strings.Contains(err.Error(), "root") {
			t.Fatalf("checkTools without root = %v, want a refusal naming root", err)
		}
		return
	}
	o := testOptions(t)
	o.Bin, o.CNIBin, o.PauseTarball = t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "pause.tar")
	err := checkTools(o)
	if err == nil {
		t.Fatal("checkTools with an empty toolchain: no error")
	}
	for _, want := range []string{filepath.Join(o.Bin, "kube-apiserver"), filepath.Join(o.CNIBin, "bridge"), o.PauseTarball, "make cluster"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("checkTools = %q, does not name %s", err, want)
		}
	}
}

// TestPaths: what a cluster keeps lies under its directory, where Stop and the tests
// look for it.
func TestPaths(t *testing.T) {
	o := Options{Dir: "/c", NodeIP: "10.254.0.1", APIPort: 6443}
	for got, want := range map[string]string{
		o.pidFile("etcd"):    "/c/run/etcd.pid",
		o.logFile("kubelet"): "/c/logs/kubelet.log",
		o.socket():           "/c/run/containerd.sock",
		o.Kubeconfig():       "/c/kubeconfig",
		o.pki("ca.crt"):      "/c/pki/ca.crt",
		o.APIServer():        "https://10.254.0.1:6443",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}
