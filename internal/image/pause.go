package image

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// PauseUID is the user the pause image runs as (the upstream pause image's).
const PauseUID = 65535

// PausePath is where the pause binary lies in its image, and its entrypoint.
const PausePath = "/pause"

// BuildPause assembles the sandbox ("pause") image of make cluster's node from a
// statically linked pause binary (hack/pause): one layer holding it at PausePath,
// run as PauseUID. scratch holds the compressed layer.
func BuildPause(binary, scratch string) (v1.Image, error) {
	l, err := writeLayer(scratch, "pause", []entry{{Path: PausePath, Mode: 0o755, File: binary}})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return nil, fmt.Errorf("assemble pause image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Config = v1.Config{
		Entrypoint: []string{PausePath},
		User:       fmt.Sprintf("%d:%d", PauseUID, PauseUID),
		Labels:     map[string]string{"org.opencontainers.image.title": "terraplane-pause"},
	}
	return mutate.ConfigFile(img, cfg)
}
