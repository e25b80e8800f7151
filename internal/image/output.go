package image

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Index is the image index (OCI) over imgs, one entry per image with its platform; the
// index carries the first image's org.opencontainers.image labels as annotations.
func Index(imgs ...v1.Image) (v1.ImageIndex, error) {
	if len(imgs) == 0 {
		return nil, fmt.Errorf("an image index needs at least one image")
	}
	var adds []mutate.IndexAddendum
	annotations := map[string]string{}
	for i, img := range imgs {
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, fmt.Errorf("read image config: %w", err)
		}
		p := cfg.Platform()
		if p == nil {
			return nil, fmt.Errorf("image %d names no platform", i)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
		for k, v := range cfg.Config.Labels {
			if i == 0 && strings.HasPrefix(k, "org.opencontainers.image.") {
				annotations[k] = v
			}
		}
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)
	return mutate.Annotations(idx, annotations).(v1.ImageIndex), nil
}

// WriteLayout writes img as an OCI image layout in dir (what `crane push DIR` reads),
// replacing what was there.
func WriteLayout(img v1.Image, dir, ref string) error {
	return writeLayout(dir, ref, func(p layout.Path, opt layout.Option) error { return p.AppendImage(img, opt) })
}

// WriteIndexLayout writes idx as an OCI image layout in dir, replacing what was there.
func WriteIndexLayout(idx v1.ImageIndex, dir, ref string) error {
	return writeLayout(dir, ref, func(p layout.Path, opt layout.Option) error { return p.AppendIndex(idx, opt) })
}

// writeLayout makes an empty layout in dir and appends to it with the annotations that
// name ref: org.opencontainers.image.ref.name, and io.containerd.image.name (the full
// name, e.g. docker.io/library/terraplane:dev) that `ctr images import` tags it with.
func writeLayout(dir, ref string, appendTo func(layout.Path, layout.Option) error) error {
	full, err := fullName(ref)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write OCI layout: %w", err)
	}
	if err := appendTo(p, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref, "io.containerd.image.name": full})); err != nil {
		return fmt.Errorf("write OCI layout: %w", err)
	}
	return nil
}

// fullName is ref as containerd names it: docker.io/library/terraplane:dev for terraplane:dev.
func fullName(ref string) (string, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", ref, err)
	}
	reg := tag.RegistryStr()
	if reg == name.DefaultRegistry {
		reg = "docker.io"
	}
	return reg + "/" + tag.RepositoryStr() + ":" + tag.TagStr(), nil
}

// WriteTarball writes img as an image tarball tagged ref (see WriteArchive), which
// `docker load`, `podman load` and `ctr import` read.
func WriteTarball(img v1.Image, path, ref string) error {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".layout-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := WriteLayout(img, dir, ref); err != nil {
		return err
	}
	return WriteArchive(dir, path, ref, v1.Platform{})
}

// Push pushes img to ref with the credentials of the local Docker configuration.
func Push(img v1.Image, ref string, opts ...name.Option) error {
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	if err := remote.Write(r, img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}

// PushIndex pushes idx and every image it holds to ref with the credentials of the local
// Docker configuration.
func PushIndex(idx v1.ImageIndex, ref string, opts ...name.Option) error {
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	if err := remote.WriteIndex(r, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}

// FromLayout reads the single image of the OCI layout in dir.
func FromLayout(dir string) (v1.Image, error) {
	idx, desc, err := single(dir)
	if err != nil {
		return nil, err
	}
	if !desc.MediaType.IsImage() {
		return nil, fmt.Errorf("OCI layout %s holds an image index, not an image", dir)
	}
	return idx.Image(desc.Digest)
}

// IndexFromLayout reads the single image index of the OCI layout in dir.
func IndexFromLayout(dir string) (v1.ImageIndex, error) {
	idx, desc, err := single(dir)
	if err != nil {
		return nil, err
	}
	if !desc.MediaType.IsIndex() {
		return nil, fmt.Errorf("OCI layout %s holds an image, not an image index", dir)
	}
	return idx.ImageIndex(desc.Digest)
}

// single is the layout's index.json and its one entry.
func single(dir string) (v1.ImageIndex, v1.Descriptor, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("read OCI layout %s: %w", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("read OCI layout %s: %w", dir, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, v1.Descriptor{}, fmt.Errorf("read OCI layout %s: %w", dir, err)
	}
	if len(m.Manifests) != 1 {
		return nil, v1.Descriptor{}, fmt.Errorf("OCI layout %s holds %d images, want 1", dir, len(m.Manifests))
	}
	return idx, m.Manifests[0], nil
}
