package stackpkg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// IndexRepository is where a registry's stack index lives (tag latest).
const IndexRepository = "terraplane/stack-index:latest"

// IndexMediaType is the index artifact's single layer.
const IndexMediaType types.MediaType = "application/vnd.terraplane.stack-index.v1+json"

// ErrNotFound means the index names no package for a CRD.
var ErrNotFound = errors.New("not in the stack index")

// Index maps packages (by repository) to what they own and need. `terraplane stack push`
// keeps it current; the manager reads it to resolve installs by CRD and dependencies.
type Index struct {
	// Packages by repository (registry-relative, e.g. stacks/sample).
	Packages map[string]IndexEntry `json:"packages"`
}

// IndexEntry is the latest pushed tag of one repository.
type IndexEntry struct {
	// Package is repo:tag, relative to the registry.
	Package string `json:"package"`
	// Digest of the pushed manifest.
	Digest string `json:"digest"`
	// Owns lists plural.group/version.
	Owns []string `json:"owns"`
	// DependsOn lists plural.group/version (wildcards allowed).
	DependsOn []string `json:"dependsOn,omitempty"`
}

// Lookup returns the package that owns crd (plural.group/version; *.group/version
// matches any kind of the group), preferring the lexically first repository.
func (ix *Index) Lookup(crd string) (IndexEntry, error) {
	repos := make([]string, 0, len(ix.Packages))
	for r := range ix.Packages {
		repos = append(repos, r)
	}
	sort.Strings(repos)
	for _, r := range repos {
		for _, o := range ix.Packages[r].Owns {
			if Matches(crd, o) {
				return ix.Packages[r], nil
			}
		}
	}
	return IndexEntry{}, fmt.Errorf("%w: no package owns %s", ErrNotFound, crd)
}

// LoadIndex reads the registry's index; a registry without one has an empty index.
func LoadIndex(ctx context.Context, registry string, opts ...remote.Option) (*Index, error) {
	ix := &Index{Packages: map[string]IndexEntry{}}
	ref, err := Ref(registry, IndexRepository)
	if err != nil {
		return nil, err
	}
	img, err := remote.Image(ref, append(opts, remote.WithContext(ctx))...)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return ix, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fetch stack index %s: %w", ref, err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		return nil, fmt.Errorf("stack index %s is not a single-layer artifact (%v)", ref, err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		return nil, fmt.Errorf("read stack index: %w", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, DefaultLimits.MaxTotalBytes))
	if err != nil {
		return nil, fmt.Errorf("read stack index: %w", err)
	}
	if err := json.Unmarshal(b, ix); err != nil {
		return nil, fmt.Errorf("decode stack index: %w", err)
	}
	if ix.Packages == nil {
		ix.Packages = map[string]IndexEntry{}
	}
	return ix, nil
}

// PushIndex writes ix as the registry's index artifact.
func PushIndex(ctx context.Context, registry string, ix *Index, opts ...remote.Option) error {
	b, err := json.MarshalIndent(ix, "", "  ")
	if err != nil {
		return fmt.Errorf("encode stack index: %w", err)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), static.NewLayer(b, IndexMediaType))
	if err != nil {
		return fmt.Errorf("build stack index: %w", err)
	}
	ref, err := Ref(registry, IndexRepository)
	if err != nil {
		return err
	}
	return Push(ctx, ref, img, opts...)
}

// Publish pushes a built package to registry/pkg and records it in the registry's index.
func Publish(ctx context.Context, registry, pkg string, files Files, opts ...remote.Option) (string, error) {
	img, p, err := Build(files)
	if err != nil {
		return "", err
	}
	ref, err := Ref(registry, pkg)
	if err != nil {
		return "", err
	}
	if err := Push(ctx, ref, img, opts...); err != nil {
		return "", err
	}
	d, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("digest: %w", err)
	}
	reg := ref.Context().RegistryStr()
	ix, err := LoadIndex(ctx, reg, opts...)
	if err != nil {
		return "", err
	}
	tag := ref.Identifier()
	ix.Packages[ref.Context().RepositoryStr()] = IndexEntry{
		Package: ref.Context().RepositoryStr() + ":" + tag, Digest: d.String(), Owns: p.Owned(), DependsOn: p.DependsOn(),
	}
	if err := PushIndex(ctx, reg, ix, opts...); err != nil {
		return "", err
	}
	return ref.Context().Digest(d.String()).String(), nil
}

// RegistryOf returns the registry host of a reference string.
func RegistryOf(ref string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("parse reference %q: %w", ref, err)
	}
	return r.Context().RegistryStr(), nil
}
