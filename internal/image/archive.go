package image

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// dockerEntry is one image of a Docker archive's manifest.json.
type dockerEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// WriteArchive writes the OCI image layout in dir as one tarball at path: the layout's
// files (oci-layout, index.json, blobs/), which `ctr images import`, `podman load` and
// skopeo read whole (an index with every platform), and a Docker manifest.json naming
// ref's image for platform (linux/amd64 when empty), which `docker load` reads.
func WriteArchive(dir, path, ref string, platform v1.Platform) error {
	manifest, err := dockerManifest(dir, ref, platform)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("create image tarball: %w", err)
	}
	tw := tar.NewWriter(f)
	err = writeTree(tw, dir)
	if err == nil {
		err = writeTarFile(tw, "manifest.json", int64(len(manifest)), func(w io.Writer) error { _, err := w.Write(manifest); return err })
	}
	for _, c := range []io.Closer{tw, f} {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write image tarball %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// dockerManifest is the manifest.json that names platform's image of the layout as ref.
func dockerManifest(dir, ref string, platform v1.Platform) ([]byte, error) {
	img, err := platformImage(dir, platform)
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigName()
	if err != nil {
		return nil, err
	}
	entry := dockerEntry{Config: blobPath(cfg), RepoTags: []string{ref}}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return nil, err
		}
		entry.Layers = append(entry.Layers, blobPath(d))
	}
	return json.Marshal([]dockerEntry{entry})
}

// platformImage is the layout's image, or its index's image for platform.
func platformImage(dir string, platform v1.Platform) (v1.Image, error) {
	idx, desc, err := single(dir)
	if err != nil {
		return nil, err
	}
	if desc.MediaType.IsImage() {
		return idx.Image(desc.Digest)
	}
	inner, err := idx.ImageIndex(desc.Digest)
	if err != nil {
		return nil, err
	}
	m, err := inner.IndexManifest()
	if err != nil {
		return nil, err
	}
	if platform.OS == "" {
		platform = v1.Platform{OS: "linux", Architecture: "amd64"}
	}
	for _, d := range m.Manifests {
		if d.Platform != nil && d.Platform.OS == platform.OS && d.Platform.Architecture == platform.Architecture {
			return inner.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("the image index in %s has no %s/%s image", dir, platform.OS, platform.Architecture)
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// writeTree writes the regular files under dir, in lexical order, named relative to it.
func writeTree(tw *tar.Writer, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return writeTarFile(tw, filepath.ToSlash(rel), fi.Size(), func(w io.Writer) error {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(w, f)
			return err
		})
	})
}

// writeTarFile writes one file of size bytes, which body writes.
func writeTarFile(tw *tar.Writer, name string, size int64, body func(io.Writer) error) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: size, ModTime: epoch, Format: tar.FormatPAX}); err != nil {
		return err
	}
	return body(tw)
}
