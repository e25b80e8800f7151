package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// backendStateFile is where init records the backend a workspace uses, in its data dir.
const backendStateFile = "terraform.tfstate"

// initCache keeps one finished init per module checksum: the data directory (installed
// providers and modules, the backend record) and the dependency lock file. A workspace of
// a module already initialised copies them instead of running terraform init, and only
// its own backend settings change in the copy. The cache is emptied when the engine
// starts, so a changed plugin mirror is never served from an old init.
type initCache struct {
	root string
}

// newInitCache empties and makes the cache directory root.
func newInitCache(root string) (initCache, error) {
	if err := os.RemoveAll(root); err != nil {
		return initCache{}, fmt.Errorf("empty the init cache: %w", err)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return initCache{}, fmt.Errorf("create the init cache: %w", err)
	}
	return initCache{root: root}, nil
}

// errNoInit says the cache holds no init of a module.
var errNoInit = errors.New("no init of this module is cached")

// restore readies dir from the cached init of module, with backend as its own backend
// settings. Any error leaves dir to a real terraform init.
func (c initCache) restore(module, dir string, backend map[string]string) error {
	src := filepath.Join(c.root, module)
	record, err := os.ReadFile(filepath.Join(src, dataDir, backendStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(src); serr != nil {
			return errNoInit
		}
		record = nil // a module without a backend block
	} else if err != nil {
		return fmt.Errorf("read cached backend record: %w", err)
	}
	if record, err = withBackendConfig(record, backend); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(dir, dataDir)); err != nil {
		return fmt.Errorf("clear data dir: %w", err)
	}
	if err := copyTree(filepath.Join(src, dataDir), filepath.Join(dir, dataDir)); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(src, lockFile), filepath.Join(dir, lockFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if record == nil {
		return nil
	}
	path := filepath.Join(dir, dataDir, backendStateFile)
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("replace backend record: %w", err)
	}
	return os.WriteFile(path, record, 0o600)
}

// save keeps dir's fresh init as module's, unless one is kept already. It is best
// effort: a workspace that cannot be saved only means the next one runs init too.
func (c initCache) save(module, dir string) {
	dst := filepath.Join(c.root, module)
	if _, err := os.Stat(dst); err == nil {
		return
	}
	tmp, err := os.MkdirTemp(c.root, "saving-")
	if err != nil {
		return
	}
	defer os.RemoveAll(tmp)
	if copyTree(filepath.Join(dir, dataDir), filepath.Join(tmp, dataDir)) != nil {
		return
	}
	if err := copyFile(filepath.Join(dir, lockFile), filepath.Join(tmp, lockFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return
	}
	_ = os.Rename(tmp, dst) // another workspace may have saved the same module first
}

// forget drops module's cached init, after a workspace restored from it was refused.
func (c initCache) forget(module string) {
	_ = os.RemoveAll(filepath.Join(c.root, module))
}

// withBackendConfig sets a workspace's own settings in the backend record init wrote
// for another workspace of the module. Terraform checks the record against the backend
// block of the files, which -backend-config values are not part of, and configures the
// backend from the record. Every setting must already be in the record.
func withBackendConfig(record []byte, backend map[string]string) ([]byte, error) {
	if record == nil {
		if len(backend) > 0 {
			return nil, fmt.Errorf("cached init has no backend to configure")
		}
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(record))
	dec.UseNumber() // the record's hash must survive exactly
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode cached backend record: %w", err)
	}
	b, _ := doc["backend"].(map[string]any)
	cfg, _ := b["config"].(map[string]any)
	for k, v := range backend {
		if _, ok := cfg[k]; !ok {
			return nil, fmt.Errorf("cached backend record has no setting %q", k)
		}
		cfg[k] = v
	}
	return json.MarshalIndent(doc, "", "  ")
}

// initRequired matches terraform's (and OpenTofu's) errors that ask for an init: a data
// directory that does not fit the configuration.
var initRequired = regexp.MustCompile(`(terraform|tofu) init`)

// copyTree copies the directory src to dst, symbolic links pointing at the same absolute
// target. Installed providers are hard links where the file system allows (they are
// large and terraform never writes them in place); other files, which terraform may
// rewrite, are copies.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			return os.Symlink(target, to)
		}
		if strings.HasPrefix(rel, "providers"+string(filepath.Separator)) && os.Link(p, to) == nil {
			return nil
		}
		return copyFile(p, to)
	})
}

// copyFile copies one regular file with its mode.
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
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
