package image

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/klauspost/compress/gzip"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// entry is one file or directory of a layer; File is the host file whose content it
// holds (symbolic links followed), Data its content when it comes from memory.
type entry struct {
	Path string // absolute path in the image
	Mode int64
	UID  int
	File string
	Data []byte
	Dir  bool
}

// epoch is the modification time of every file, so that identical inputs give
// identical layers.
var epoch = time.Unix(0, 0).UTC()

// writeLayer writes entries (and their parent directories) as a gzip-compressed tar in
// dir and returns it as a layer; the file is compressed once, here.
func writeLayer(dir, name string, entries []entry) (v1.Layer, error) {
	p := filepath.Join(dir, name+".tar.gz")
	f, err := os.Create(p)
	if err != nil {
		return nil, fmt.Errorf("create layer %s: %w", name, err)
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	tw := tar.NewWriter(zw)
	err = writeEntries(tw, entries)
	for _, c := range []io.Closer{tw, zw, f} {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("write layer %s: %w", name, err)
	}
	return tarball.LayerFromFile(p)
}

func writeEntries(tw *tar.Writer, entries []entry) error {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	seen := map[string]bool{}
	for _, e := range entries {
		if err := writeParents(tw, e.Path, seen); err != nil {
			return err
		}
		if e.Dir {
			if seen[e.Path] {
				continue
			}
			seen[e.Path] = true
			if err := tw.WriteHeader(dirHeader(e.Path, e.Mode, e.UID)); err != nil {
				return err
			}
			continue
		}
		if err := writeFile(tw, e); err != nil {
			return err
		}
	}
	return nil
}

func writeParents(tw *tar.Writer, p string, seen map[string]bool) error {
	var parents []string
	for d := path.Dir(p); d != "/" && !seen[d]; d = path.Dir(d) {
		parents = append(parents, d)
	}
	for i := len(parents) - 1; i >= 0; i-- {
		seen[parents[i]] = true
		if err := tw.WriteHeader(dirHeader(parents[i], 0o755, 0)); err != nil {
			return err
		}
	}
	return nil
}

func dirHeader(p string, mode int64, uid int) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeDir, Name: strings.TrimPrefix(p, "/") + "/", Mode: mode,
		Uid: uid, Gid: uid, ModTime: epoch, Format: tar.FormatPAX}
}

func writeFile(tw *tar.Writer, e entry) error {
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(e.Path, "/"), Mode: e.Mode,
		Uid: e.UID, Gid: e.UID, ModTime: epoch, Format: tar.FormatPAX}
	if e.File == "" {
		hdr.Size = int64(len(e.Data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(e.Data)
		return err
	}
	f, err := os.Open(e.File) // follows symbolic links: the image holds the file itself
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	hdr.Size = fi.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}
