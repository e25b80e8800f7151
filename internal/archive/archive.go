package archive

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// ErrUnsafe marks an archive refused for its shape (links, traversal, size) rather than
// its content.
var ErrUnsafe = errors.New("unsafe archive")

// Limits cap what an archive may hold.
type Limits struct {
	// MaxFiles is the most regular files an archive may hold.
	MaxFiles int
	// MaxFileBytes is the largest single file.
	MaxFileBytes int64
	// MaxTotalBytes is the most bytes all files together may hold.
	MaxTotalBytes int64
}

// headerAllowance is what the tar stream may add per file beyond its content (header,
// long-name records, padding) before reading stops.
const headerAllowance = 2048

// CleanPath returns name as a clean relative slash path, or an ErrUnsafe error when it is
// absolute, uses backslashes or climbs out with "..".
func CleanPath(name string) (string, error) {
	n := strings.TrimPrefix(name, "./")
	if n == "" || strings.HasPrefix(n, "/") || strings.Contains(n, "\\") {
		return "", fmt.Errorf("%w: path %q is not relative", ErrUnsafe, name)
	}
	for _, part := range strings.Split(strings.TrimSuffix(n, "/"), "/") {
		if part == ".." {
			return "", fmt.Errorf("%w: path %q leaves the archive", ErrUnsafe, name)
		}
	}
	return path.Clean(n), nil
}

// Read reads a tar stream into memory: regular files only (directories and PAX global
// headers are skipped; links and devices refused), each path relative and inside the
// archive, no path twice, and nothing over lim. The stream itself is capped, so a reader
// never consumes more than the limits allow.
func Read(r io.Reader, lim Limits) (map[string][]byte, error) {
	files := map[string][]byte{}
	var total int64
	tr := tar.NewReader(io.LimitReader(r, lim.MaxTotalBytes+int64(lim.MaxFiles+1)*headerAllowance))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeXGlobalHeader:
			continue
		case tar.TypeReg:
		default:
			return nil, fmt.Errorf("%w: %q is a link or special file (type %q); only regular files are accepted", ErrUnsafe, h.Name, string(h.Typeflag))
		}
		name, err := CleanPath(h.Name)
		if err != nil {
			return nil, err
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

// Write writes files as a reproducible archive: sorted, zero times, mode 0644.
func Write(files map[string][]byte) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
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
