package devenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// CacheDir is the toolchain cache: $TERRAPLANE_CACHE, or ~/.cache/terraplane.
func CacheDir() string {
	if d := os.Getenv("TERRAPLANE_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "terraplane")
}

// BinDir holds kube-apiserver, etcd, kubectl and minio.
func BinDir() string { return filepath.Join(CacheDir(), "bin") }

// testOnly are the cached tools that only the tests need: make tools-test installs them.
var testOnly = map[string]bool{"minio": true}

// PluginMirror is the shared Terraform provider mirror.
func PluginMirror() string { return filepath.Join(CacheDir(), "providers") }

// Tool returns the path of a cached tool, or an error that names the make target that installs it.
func Tool(name string) (string, error) {
	p := filepath.Join(BinDir(), name)
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	target := "make tools"
	if testOnly[name] {
		target = "make tools-test"
	}
	return "", fmt.Errorf("%s is not installed in %s: run `%s`", name, BinDir(), target)
}
