package image

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestBuildStatic checks images of one binary (the pause image, a kubectl image): the
// binary alone at its path, as the entrypoint, run as the given user, and nothing of the
// controller's image (no passwd, no CA bundle).
func TestBuildStatic(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, []byte("binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		build func() (v1.Image, error)
		files map[string]int64
		cfg   v1.Config
	}{
		{"pause", func() (v1.Image, error) { return BuildPause(bin, t.TempDir()) }, map[string]int64{"/pause": 0o755},
			v1.Config{Entrypoint: []string{"/pause"}, User: "65535:65535", Labels: map[string]string{"org.opencontainers.image.title": "terraplane-pause"}}},
		{"kubectl", func() (v1.Image, error) { return BuildStatic(bin, "/usr/local/bin/kubectl", 65532, t.TempDir()) },
			map[string]int64{"/usr/local/bin/kubectl": 0o755},
			v1.Config{Entrypoint: []string{"/usr/local/bin/kubectl"}, User: "65532:65532", Labels: map[string]string{"org.opencontainers.image.title": "terraplane-kubectl"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.files, imageFiles(t, img)); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.cfg, cfg.Config); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
			if cfg.OS != "linux" || cfg.Architecture != "amd64" {
				t.Errorf("platform %s/%s, want linux/amd64", cfg.OS, cfg.Architecture)
			}
		})
	}
	if _, err := BuildPause(filepath.Join(dir, "missing"), dir); err == nil {
		t.Error("a missing binary built an image")
	}
}
