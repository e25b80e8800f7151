package main

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig with one cluster, user and context per name; the
// first is current.
func writeKubeconfig(t *testing.T, names ...string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	for _, n := range names {
		cfg.Clusters[n] = &clientcmdapi.Cluster{Server: "https://" + n + ".example.com"}
		cfg.AuthInfos[n] = &clientcmdapi.AuthInfo{Token: "token-" + n}
		cfg.Contexts[n] = &clientcmdapi.Context{Cluster: n, AuthInfo: n}
	}
	cfg.CurrentContext = names[0]
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestStateBackendFollowsTheCluster(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	one := writeKubeconfig(t, "prod", "staging")

	k := &kubeFlags{kubeconfig: one}
	path, context, err := k.stateBackend("")
	if err != nil || path != one || context != "" {
		t.Fatalf("one file at its current context is used as it is: %q %q %v", path, context, err)
	}

	if path, _, err = k.stateBackend("other/kubeconfig"); err != nil || !filepath.IsAbs(path) || filepath.Base(path) != "kubeconfig" {
		t.Fatalf("--state-kubeconfig overrides: %q %v", path, err)
	}

	k.context = "staging"
	if path, context, err = k.stateBackend(""); err != nil || path != one || context != "staging" {
		t.Fatalf("--context reaches the backend, with the same file: %q %q %v", path, context, err)
	}

	dev := writeKubeconfig(t, "dev")
	t.Setenv("KUBECONFIG", dev+string(os.PathListSeparator)+one)
	k = &kubeFlags{}
	if path, _, err = k.stateBackend(""); err != nil || path != dev+string(os.PathListSeparator)+one {
		t.Fatalf("several files in KUBECONFIG reach the backend as they are: %q %v", path, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(one))
	for _, e := range entries {
		if e.Name() == "state-kubeconfig" {
			t.Error("no copy of any credentials is written")
		}
	}
}

func TestRestConfigErrors(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := (&kubeFlags{}).restConfig(); err != errNoKubeconfig {
		t.Errorf("no kubeconfig anywhere: got %v", err)
	}
	if _, err := (&kubeFlags{kubeconfig: "/no/such/file"}).restConfig(); err == nil || err.Error() != "kubeconfig /no/such/file: no such file or directory" {
		t.Errorf("a missing file: got %v", err)
	}
	if _, err := (&kubeFlags{kubeconfig: writeKubeconfig(t, "prod"), context: "nope"}).restConfig(); err == nil {
		t.Error("an unknown context must fail")
	}
	cfg, err := (&kubeFlags{kubeconfig: writeKubeconfig(t, "prod", "staging"), context: "staging"}).restConfig()
	if err != nil || cfg.Host != "https://staging.example.com" {
		t.Errorf("--context picks the cluster: %v %v", cfg, err)
	}
}
