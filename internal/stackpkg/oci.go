package stackpkg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Manifest annotations of a stack package image.
const (
	// ManifestOwns lists the owned CRDs (plural.group/version, comma-separated).
	ManifestOwns = AnnotationPrefix + "owns"
	// ManifestDependsOn lists the dependsOn CRDs (comma-separated).
	ManifestDependsOn = AnnotationPrefix + "depends-on"
	// ManifestTitle is app.yaml's title.
	ManifestTitle = "org.opencontainers.image.title"
	// ManifestVersion is app.yaml's version.
	ManifestVersion = "org.opencontainers.image.version"
)

// ErrNoRegistry means a package reference has no registry host and none was given.
var ErrNoRegistry = errors.New("no registry")

// Build parses files (so that a broken package is never pushed) and makes the package
// image: one gzipped tar layer holding .registry/, with the owned and dependsOn CRDs in
// the manifest's annotations.
func Build(files Files) (v1.Image, *Package, error) {
	pkg, err := Parse(files)
	if err != nil {
		return nil, nil, err
	}
	raw, err := WriteTar(files)
	if err != nil {
		return nil, nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, nil, fmt.Errorf("make layer: %w", err)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, nil, fmt.Errorf("append layer: %w", err)
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	ann := map[string]string{
		ManifestOwns:      strings.Join(pkg.Owned(), ","),
		ManifestDependsOn: strings.Join(pkg.DependsOn(), ","),
		ManifestTitle:     pkg.App.Title,
		ManifestVersion:   pkg.App.Version,
	}
	return mutate.Annotations(img, ann).(v1.Image), pkg, nil
}

// Ref makes a reference from a registry host and a package (repo:tag); a package that
// already names a registry host keeps it (ggcr's rules: a first element with a dot, a
// port or "localhost" is a host). Loopback registries are spoken to over HTTP.
//
// A registry written as http://host[:port] is spoken to over plain HTTP wherever it is;
// https:// (or no scheme) means HTTPS.
func Ref(registry, pkg string) (name.Reference, error) {
	opts := []name.Option{name.StrictValidation}
	if host, ok := strings.CutPrefix(registry, "http://"); ok {
		registry, opts = host, append(opts, name.Insecure)
	}
	registry = strings.TrimSuffix(strings.TrimPrefix(registry, "https://"), "/")
	const none = "no-registry.invalid"
	ref, err := name.ParseReference(pkg, name.WithDefaultRegistry(none))
	if err != nil {
		return nil, fmt.Errorf("parse package reference %q: %w", pkg, err)
	}
	full := pkg
	if ref.Context().RegistryStr() == none {
		if registry == "" {
			return nil, fmt.Errorf("%w: package %q names no registry host", ErrNoRegistry, pkg)
		}
		full = registry + "/" + pkg
	}
	if ref, err = name.ParseReference(full, opts...); err != nil {
		return nil, fmt.Errorf("parse package reference %q: %w", full, err)
	}
	return ref, nil
}

// Push uploads img to ref.
func Push(ctx context.Context, ref name.Reference, img v1.Image, opts ...remote.Option) error {
	if err := remote.Write(ref, img, append(opts, remote.WithContext(ctx))...); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}

// Pulled is a package fetched from a registry.
type Pulled struct {
	// Package is the parsed content.
	*Package
	// Files are the raw files.
	Files Files
	// Digest is the manifest digest.
	Digest string
}

// Pull fetches and parses the package at ref in memory, refusing anything over lim before
// downloading it and anything unsafe inside it.
func Pull(ctx context.Context, ref name.Reference, lim Limits, opts ...remote.Option) (*Pulled, error) {
	img, err := remote.Image(ref, append(opts, remote.WithContext(ctx))...)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", ref, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("read manifest of %s: %w", ref, err)
	}
	if len(m.Layers) != 1 {
		return nil, fmt.Errorf("%w: %s has %d layers; a stack package has exactly one", ErrUnsafe, ref, len(m.Layers))
	}
	if m.Layers[0].Size > lim.MaxTotalBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d byte limit", ErrUnsafe, ref, m.Layers[0].Size, lim.MaxTotalBytes)
	}
	files, err := readLayer(img, lim)
	if err != nil {
		return nil, fmt.Errorf("unpack %s: %w", ref, err)
	}
	pkg, err := Parse(files)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("digest of %s: %w", ref, err)
	}
	return &Pulled{Package: pkg, Files: files, Digest: d.String()}, nil
}

func readLayer(img v1.Image, lim Limits) (Files, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return ReadTar(rc, lim)
}

// Describe is what `terraplane stack inspect` prints.
func Describe(p *Pulled) ([]byte, error) {
	out := map[string]any{
		"digest": p.Digest, "title": p.App.Title, "version": p.App.Version,
		"permissionScope": p.App.PermissionScope, "owns": p.Owned(), "dependsOn": p.DependsOn(),
		"files": p.Files.Names(), "controller": p.Install != nil, "modules": len(p.Modules), "classes": len(p.Objects),
	}
	return json.MarshalIndent(out, "", "  ")
}
