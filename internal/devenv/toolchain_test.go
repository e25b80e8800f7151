package devenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestToolNamesItsTarget: a cached tool is found; a missing one names the make target
// that installs it (make tools-test for what only the tests need).
func TestToolNamesItsTarget(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("TERRAPLANE_CACHE", cache)
	t.Setenv("PATH", t.TempDir())
	if err := os.MkdirAll(filepath.Join(cache, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "bin", "etcd"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	type result struct{ Path, Err string }
	for _, tc := range []struct {
		name string
		want result
	}{
		{"etcd", result{Path: filepath.Join(cache, "bin", "etcd")}},
		{"kube-apiserver", result{Err: "kube-apiserver is not installed in " + filepath.Join(cache, "bin") + ": run `make tools`"}},
		{"minio", result{Err: "minio is not installed in " + filepath.Join(cache, "bin") + ": run `make tools-test`"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Tool(tc.name)
			got := result{Path: p}
			if err != nil {
				got.Err = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
