package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// chown gives path to uid (and its group), when uid is one (>= 0), without following
// a link: what a runner left in its directory is never followed.
func chown(path string, uid int) error {
	if uid < 0 {
		return nil
	}
	if err := os.Lchown(path, uid, uid); err != nil {
		return fmt.Errorf("give %s to the runner: %w", path, err)
	}
	return nil
}

// writeOwned writes a new file only uid (and root) may read. Whatever was at path (in a
// directory the runner owns: maybe a link it made) is removed, and the file is made
// afresh, never through a link.
func writeOwned(path string, data []byte, uid int) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if uid >= 0 {
		if err := f.Chown(uid, uid); err != nil {
			f.Close()
			return fmt.Errorf("give %s to the runner: %w", path, err)
		}
	}
	return f.Close()
}

// linkTree makes dst hold what src holds, readable by everyone: directories 0755, files
// hard-linked (copied where a link cannot be made) and readable, symlinks resolved.
func linkTree(src, dst string) error {
	src, err := filepath.EvalSymlinks(src)
	if err != nil {
		return fmt.Errorf("share %s with runners: %w", src, err)
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			return os.Chmod(target, 0o755)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return err
		}
		if _, err := os.Lstat(target); err == nil {
			return nil // shared already
		}
		if err := os.Link(real, target); err != nil {
			if err := copyFile(real, target); err != nil {
				return fmt.Errorf("share %s with runners: %w", path, err)
			}
		}
		info, err := os.Stat(target)
		if err != nil {
			return err
		}
		return os.Chmod(target, info.Mode()|0o444)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, info.Mode()|0o444)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
