package stackpkg

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Limits cap what a package may hold.
type Limits struct {
	// MaxFiles is the most regular files a package may hold.
	MaxFiles int
	// MaxFileBytes is the largest single file.
	MaxFileBytes int64
	// MaxTotalBytes is the most bytes all files together may hold.
	MaxTotalBytes int64
}

// DefaultLimits are generous for metadata, CRDs and modules, and small for anything else.
var DefaultLimits = Limits{MaxFiles: 512, MaxFileBytes: 4 << 20, MaxTotalBytes: 16 << 20}

// Root is the directory every package file lives under.
const Root = ".registry"

// ErrUnsafe marks a package refused for its shape (links, traversal, size) rather than its content.
var ErrUnsafe = errors.New("unsafe package")

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

// cleanPath accepts only relative paths under Root without traversal.
func cleanPath(name string) (string, error) {
	n := strings.TrimPrefix(name, "./")
	if n == "" || strings.HasPrefix(n, "/") || strings.Contains(n, "\\") {
		return "", fmt.Errorf("%w: path %q is not relative", ErrUnsafe, name)
	}
	for _, part := range strings.Split(strings.TrimSuffix(n, "/"), "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: path %q leaves the package", ErrUnsafe, name)
		}
	}
	n = path.Clean(n)
	if n != Root && !strings.HasPrefix(n, Root+"/") {
		return "", fmt.Errorf("%w: path %q is outside %s/", ErrUnsafe, name, Root)
	}
	return n, nil
}

// ReadTar reads a package archive, refusing links, devices, traversal and anything over lim.
func ReadTar(r io.Reader, lim Limits) (Files, error) {
	files := Files{}
	var total int64
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		name, err := cleanPath(h.Name)
		if err != nil {
			return nil, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("%w: %q is a link or special file (type %q); packages hold only regular files", ErrUnsafe, h.Name, string(h.Typeflag))
		}
		if len(files) >= lim.MaxFiles {
			return nil, fmt.Errorf("%w: more than %d files", ErrUnsafe, lim.MaxFiles)
		}
		if h.Size > lim.MaxFileBytes {
			return nil, fmt.Errorf("%w: %q is %d bytes, over the %d byte limit", ErrUnsafe, name, h.Size, lim.MaxFileBytes)
		}
		if total += h.Size; total > lim.MaxTotalBytes {
			return nil, fmt.Errorf("%w: over %d bytes in total", ErrUnsafe, lim.MaxTotalBytes)
		}
		if _, dup := files[name]; dup {
			return nil, fmt.Errorf("%w: %q appears twice", ErrUnsafe, name)
		}
		b, err := io.ReadAll(io.LimitReader(tr, lim.MaxFileBytes+1))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		if int64(len(b)) != h.Size {
			return nil, fmt.Errorf("%w: %q is not %d bytes as its header says", ErrUnsafe, name, h.Size)
		}
		files[name] = b
	}
}

// WriteTar writes files as a reproducible archive (sorted, zero times, mode 0644).
func WriteTar(files Files) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range files.Names() {
		h := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("write %s: %w", n, err)
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, fmt.Errorf("write %s: %w", n, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close archive: %w", err)
	}
	return buf.Bytes(), nil
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
