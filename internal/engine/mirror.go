package engine

import (
	"os"
	"path/filepath"
)

// DefaultPluginMirror is the filesystem mirror of Terraform providers a controller or
// runner uses unless told otherwise: providers/ under $TERRAPLANE_CACHE (the image sets
// it to /opt/terraplane), else under ~/.cache/terraplane, where `make tools` fills it.
func DefaultPluginMirror() string {
	if d := os.Getenv("TERRAPLANE_CACHE"); d != "" {
		return filepath.Join(d, "providers")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "terraplane", "providers")
}
