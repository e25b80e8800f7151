package image

import (
	"fmt"
	"path"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// PauseUID is the user the pause image runs as (the upstream pause image's).
const PauseUID = 65535

// PausePath is where the pause binary lies in its image, and its entrypoint.
const PausePath = "/pause"

// BuildPause assembles the sandbox ("pause") image of make cluster's node from a
// statically linked pause binary (hack/pause): the binary at PausePath, run as PauseUID.
func BuildPause(binary, scratch string) (v1.Image, error) {
	return BuildStatic(binary, PausePath, PauseUID, scratch)
}

// BuildStatic assembles an image of one statically linked binary: one layer holding it
// at path, its entrypoint, run as uid (and the same gid). scratch holds the compressed
// layer.
func BuildStatic(binary, at string, uid int, scratch string) (v1.Image, error) {
	name := path.Base(at)
	l, err := writeLayer(scratch, name, []entry{{Path: at, Mode: 0o755, File: binary}})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return nil, fmt.Errorf("assemble %s image: %w", name, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Config = v1.Config{
		Entrypoint: []string{at},
		User:       fmt.Sprintf("%d:%d", uid, uid),
		Labels:     map[string]string{"org.opencontainers.image.title": "terraplane-" + name},
	}
	return mutate.ConfigFile(img, cfg)
}
