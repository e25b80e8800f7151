package image

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestBuildPause checks the pause image: one file, the binary, as its entrypoint, run as
// the pause user, and nothing of the controller's image (no passwd, no CA bundle).
func TestBuildPause(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pause")
	if err := os.WriteFile(bin, []byte("pause"), 0o700); err != nil {
		t.Fatal(err)
	}
	img, err := BuildPause(bin, dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]int64{"/pause": 0o755}, imageFiles(t, img)); d != "" {
		t.Errorf("pause image files (-want +got):\n%s", d)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	want := v1.Config{Entrypoint: []string{"/pause"}, User: "65535:65535", Labels: map[string]string{"org.opencontainers.image.title": "terraplane-pause"}}
	if d := cmp.Diff(want, cfg.Config); d != "" {
		t.Errorf("pause image config (-want +got):\n%s", d)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("platform %s/%s, want linux/amd64", cfg.OS, cfg.Architecture)
	}
	if _, err := BuildPause(filepath.Join(dir, "missing"), dir); err == nil {
		t.Error("a missing binary built an image")
	}
}
