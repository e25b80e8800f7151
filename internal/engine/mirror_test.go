package engine

import (
	"path/filepath"
	"testing"
)

// TestDefaultPluginMirror: the mirror is under $TERRAPLANE_CACHE when it is set (the
// image's), else under the user's cache directory.
func TestDefaultPluginMirror(t *testing.T) {
	t.Setenv("TERRAPLANE_CACHE", "/opt/terraplane")
	if got := DefaultPluginMirror(); got != "/opt/terraplane/providers" {
		t.Errorf("with TERRAPLANE_CACHE: %s", got)
	}
	t.Setenv("TERRAPLANE_CACHE", "")
	t.Setenv("HOME", "/home/op")
	if got := DefaultPluginMirror(); got != filepath.Join("/home/op", ".cache", "terraplane", "providers") {
		t.Errorf("without: %s", got)
	}
}
