package stackpkg

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// IndexRepository holds a registry's stack index: one tag per package repository
// (r-<sha256 of the repository, 24 hex digits>), each a single-layer artifact with that
// repository's IndexEntry. Every push writes only its own tag, so concurrent pushes of
// different packages never lose each other's entries.
const IndexRepository = "terraplane/stack-index"

// IndexMediaType is the media type of an index entry's single layer.
const IndexMediaType types.MediaType = "application/vnd.terraplane.stack-index-entry.v1+json"

// maxIndexEntries bounds how many entries LoadIndex reads.
const maxIndexEntries = 1000

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
	// Repository is the package's repository, relative to the registry.
	Repository string `json:"repository"`
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

// indexTag is the tag of repository's entry.
func indexTag(repository string) string {
	sum := sha256.Sum256([]byte(repository))
	return "r-" + hex.EncodeToString(sum[:12])
}

// indexRepo is the registry's index repository.
func indexRepo(registry string) (name.Repository, error) {
	ref, err := Ref(registry, IndexRepository+":latest")
	if err != nil {
		return name.Repository{}, err
	}
	return ref.Context(), nil
}

// LoadIndex reads the registry's index; a registry without one has an empty index.
func LoadIndex(ctx context.Context, registry string, opts ...remote.Option) (*Index, error) {
	ix := &Index{Packages: map[string]IndexEntry{}}
	repo, err := indexRepo(registry)
	if err != nil {
		return nil, err
	}
	opts = append(opts, remote.WithContext(ctx))
	tags, err := remote.List(repo, opts...)
	var terr *transport.Error
	if errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound {
		return ix, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list stack index %s: %w", repo, err)
	}
	sort.Strings(tags)
	for i, tag := range tags {
		if i >= maxIndexEntries {
			return nil, fmt.Errorf("stack index %s has more than %d entries", repo, maxIndexEntries)
		}
		if !strings.HasPrefix(tag, "r-") {
			continue
		}
		e, err := readEntry(repo.Tag(tag), opts)
		if err != nil {
			return nil, err
		}
		if indexTag(e.Repository) == tag {
			ix.Packages[e.Repository] = e
		}
	}
	return ix, nil
}

// readEntry fetches one index entry.
func readEntry(ref name.Tag, opts []remote.Option) (IndexEntry, error) {
	var e IndexEntry
	img, err := remote.Image(ref, opts...)
	if err != nil {
		return e, fmt.Errorf("fetch stack index entry %s: %w", ref, err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		return e, fmt.Errorf("stack index entry %s is not a single-layer artifact (%v)", ref, err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		return e, fmt.Errorf("read stack index entry %s: %w", ref, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return e, fmt.Errorf("read stack index entry %s: %w", ref, err)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("decode stack index entry %s: %w", ref, err)
	}
	return e, nil
}

// PushIndexEntry writes e as its repository's entry in the registry's index.
func PushIndexEntry(ctx context.Context, registry string, e IndexEntry, opts ...remote.Option) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("encode stack index entry: %w", err)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), static.NewLayer(b, IndexMediaType))
	if err != nil {
		return fmt.Errorf("build stack index entry: %w", err)
	}
	repo, err := indexRepo(registry)
	if err != nil {
		return err
	}
	return Push(ctx, repo.Tag(indexTag(e.Repository)), img, opts...)
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
	repo := ref.Context().RepositoryStr()
	e := IndexEntry{Repository: repo, Package: repo + ":" + ref.Identifier(), Digest: d.String(), Owns: p.Owned(), DependsOn: p.DependsOn()}
	if err := PushIndexEntry(ctx, ref.Context().RegistryStr(), e, opts...); err != nil {
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
