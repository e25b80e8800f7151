package stackpkg

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"terraplane.io/terraplane/internal/archive"
)

// Limits cap what a package may hold.
type Limits = archive.Limits

// DefaultLimits are generous for metadata, CRDs and modules, and small for anything else.
var DefaultLimits = Limits{MaxFiles: 512, MaxFileBytes: 4 << 20, MaxTotalBytes: 16 << 20}

// Root is the directory every package file lives under.
const Root = ".registry"

// ErrUnsafe marks a package refused for its shape (links, traversal, size) rather than its content.
var ErrUnsafe = archive.ErrUnsafe

// Files maps slash-separated paths (each starting with .registry/) to contents.
type Files map[string][]byte

// Names returns the paths in order.
func (f Files) Names() []string {
	out := make([]string, 0, len(f))
	for n := range f {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// underRoot refuses a path outside Root.
func underRoot(name string) error {
	if name != Root && !strings.HasPrefix(name, Root+"/") {
		return fmt.Errorf("%w: path %q is outside %s/", ErrUnsafe, name, Root)
	}
	return nil
}

// ReadTar reads a package archive with the rules of archive.Read (no links, devices,
// traversal or anything over lim), every file under Root.
func ReadTar(r io.Reader, lim Limits) (Files, error) {
	files, err := archive.Read(r, lim)
	if err != nil {
		return nil, err
	}
	for name := range files {
		if err := underRoot(name); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// WriteTar writes files as a reproducible archive (sorted, zero times, mode 0644).
func WriteTar(files Files) ([]byte, error) {
	return archive.Write(files)
}

// ReadDir reads DIR/.registry, refusing symlinks and anything over lim.
func ReadDir(dir string, lim Limits) (Files, error) {
	files := Files{}
	var total int64
	root := filepath.Join(dir, Root)
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s has no %s/ directory", dir, Root)
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%w: %s is a symlink; packages hold only regular files", ErrUnsafe, rel)
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%w: %s is not a regular file", ErrUnsafe, rel)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if len(files) >= lim.MaxFiles || info.Size() > lim.MaxFileBytes || total+info.Size() > lim.MaxTotalBytes {
			return fmt.Errorf("%w: %s exceeds the package limits (%d files, %d bytes per file, %d in total)", ErrUnsafe, rel, lim.MaxFiles, lim.MaxFileBytes, lim.MaxTotalBytes)
		}
		total += info.Size()
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read package directory: %w", err)
	}
	return files, nil
}

// Size is the number of bytes all files hold.
func (f Files) Size() int64 {
	var n int64
	for _, b := range f {
		n += int64(len(b))
	}
	return n
}
