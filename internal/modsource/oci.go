package modsource

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

// Limits on an OCI module artifact: files, bytes per file, bytes in all.
const (
	ociMaxFiles     = 1000
	ociMaxFileBytes = 4 << 20
	ociMaxBytes     = 32 << 20
)

// fromOCI pulls a module artifact (once per ref) and reads the module at path inside it.
func (l *Loader) fromOCI(ctx context.Context, src terraformv1.OCISource) (*module.Module, error) {
	if !l.allowed(src.Ref) {
		return nil, resource.UserErrorf("ModuleSourceNotAllowed", "OCI source %s is not allowed by --module-source-allow (%s)", src.Ref, strings.Join(l.AllowedGitPrefixes, ", "))
	}
	return l.cached("oci/"+src.Ref+"//"+src.Path, func() (*module.Module, error) {
		files, err := pullModule(ctx, src.Ref)
		if err != nil {
			return nil, err
		}
		prefix := strings.Trim(path.Clean("/"+src.Path), "/")
		sub := map[string][]byte{}
		for name, content := range files {
			if prefix == "" {
				sub[name] = content
			} else if rel, ok := strings.CutPrefix(name, prefix+"/"); ok {
				sub[rel] = content
			}
		}
		m, err := module.FromFiles(sub)
		if err != nil {
			return nil, resource.UserErrorf("InvalidModule", "module in %s//%s: %v", src.Ref, src.Path, err)
		}
		return m, nil
	})
}

// pullModule fetches ref's single layer and unpacks its regular files, refusing links,
// paths that leave the module and anything over the limits.
func pullModule(ctx context.Context, ref string) (map[string][]byte, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, resource.UserErrorf("InvalidSource", "OCI reference %q: %v", ref, err)
	}
	img, err := remote.Image(r, remote.WithContext(ctx))
	if err != nil {
		return nil, resource.UserErrorf("ModuleFetchFailed", "pull %s: %v", ref, err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		return nil, resource.UserErrorf("InvalidModule", "%s must have exactly one layer (a tar of the module)", ref)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		return nil, resource.UserErrorf("ModuleFetchFailed", "read %s: %v", ref, err)
	}
	defer rc.Close()
	return untar(io.LimitReader(rc, ociMaxBytes+ociMaxFiles*1024))
}

func untar(r io.Reader) (map[string][]byte, error) {
	files := map[string][]byte{}
	var total int64
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, resource.UserErrorf("InvalidModule", "module artifact: %v", err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return nil, resource.UserErrorf("InvalidModule", "module artifact holds %s, which is not a regular file (links are refused)", h.Name)
		}
		clean := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if strings.HasPrefix(clean, "../") || clean == ".." || path.IsAbs(clean) {
			return nil, resource.UserErrorf("InvalidModule", "module artifact path %s leaves the module", h.Name)
		}
		total += h.Size
		if len(files) >= ociMaxFiles || h.Size > ociMaxFileBytes || total > ociMaxBytes {
			return nil, resource.UserErrorf("InvalidModule", "module artifact is over the limits (%d files, %d bytes per file, %d bytes)", ociMaxFiles, ociMaxFileBytes, ociMaxBytes)
		}
		b, err := io.ReadAll(io.LimitReader(tr, ociMaxFileBytes))
		if err != nil {
			return nil, resource.UserErrorf("InvalidModule", "module artifact: %v", err)
		}
		files[clean] = b
	}
}
