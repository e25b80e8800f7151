package modsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

// Loader fetches and caches modules.
type Loader struct {
	// CacheDir holds git checkouts.
	CacheDir string
	// AllowedGitPrefixes, when not empty, lists the URL prefixes git and OCI sources may use.
	AllowedGitPrefixes []string

	mu    sync.Mutex
	cache map[string]*module.Module
}

// Load returns the module src points at; ConfigMaps are read from namespace.
func (l *Loader) Load(ctx context.Context, c client.Client, namespace string, src terraformv1.ModuleSource) (*module.Module, error) {
	switch {
	case src.ConfigMap != nil:
		return l.fromConfigMap(ctx, c, namespace, src.ConfigMap.Name)
	case src.Git != nil:
		return l.fromGit(ctx, *src.Git)
	case src.OCI != nil:
		return l.fromOCI(ctx, *src.OCI)
	default:
		return nil, resource.UserErrorf("InvalidSource", "the module source sets none of configMap, git or oci")
	}
}

func (l *Loader) cached(key string, load func() (*module.Module, error)) (*module.Module, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m, ok := l.cache[key]; ok {
		return m, nil
	}
	m, err := load()
	if err != nil {
		return nil, err
	}
	if l.cache == nil {
		l.cache = map[string]*module.Module{}
	}
	l.cache[key] = m
	return m, nil
}

func (l *Loader) fromConfigMap(ctx context.Context, c client.Client, namespace, name string) (*module.Module, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, resource.UserErrorf("ModuleSourceNotFound", "ConfigMap %s/%s holding the module does not exist", namespace, name)
		}
		return nil, fmt.Errorf("get module configmap: %w", err)
	}
	key := "configmap/" + string(cm.UID) + "/" + cm.ResourceVersion
	return l.cached(key, func() (*module.Module, error) {
		files := map[string][]byte{}
		for k, v := range cm.Data {
			files[k] = []byte(v)
		}
		for k, v := range cm.BinaryData {
			files[k] = v
		}
		m, err := module.FromFiles(files)
		if err != nil {
			return nil, resource.UserErrorf("InvalidModule", "module in ConfigMap %s/%s: %v", namespace, name, err)
		}
		return m, nil
	})
}

// fromGit clones url at ref into the cache (once per url@ref) and reads the module at path.
func (l *Loader) fromGit(ctx context.Context, src terraformv1.GitSource) (*module.Module, error) {
	if !l.allowed(src.URL) {
		return nil, resource.UserErrorf("ModuleSourceNotAllowed", "git source %s is not allowed by --module-source-allow (%s)", src.URL, strings.Join(l.AllowedGitPrefixes, ", "))
	}
	if strings.Contains(path.Clean("/"+src.Path), "..") {
		return nil, resource.UserErrorf("InvalidSource", "git path %q leaves the repository", src.Path)
	}
	sum := sha256.Sum256([]byte(src.URL + "@" + src.Ref))
	dir := filepath.Join(l.CacheDir, "git", hex.EncodeToString(sum[:8]))
	return l.cached("git/"+dir+"/"+src.Path, func() (*module.Module, error) {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
			if err := clone(ctx, src.URL, src.Ref, dir); err != nil {
				return nil, err
			}
		}
		m, err := module.Load(os.DirFS(dir), path.Clean("./"+src.Path))
		if err != nil {
			return nil, resource.UserErrorf("InvalidModule", "module at %s//%s?ref=%s: %v", src.URL, src.Path, src.Ref, err)
		}
		return m, nil
	})
}

func (l *Loader) allowed(url string) bool {
	if len(l.AllowedGitPrefixes) == 0 {
		return true
	}
	for _, p := range l.AllowedGitPrefixes {
		if strings.HasPrefix(url, p) {
			return true
		}
	}
	return false
}

// clone fetches exactly ref (tag, branch or commit) into dir.
func clone(ctx context.Context, url, ref, dir string) error {
	if _, err := exec.LookPath("git"); err != nil {
		return resource.UserErrorf("GitNotFound", "git is not installed on the controller; install it to use git module sources")
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	steps := [][]string{
		{"init", "-q", tmp},
		{"-C", tmp, "fetch", "-q", "--depth", "1", url, ref},
		{"-C", tmp, "checkout", "-q", "FETCH_HEAD"},
	}
	for _, args := range steps {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			_ = os.RemoveAll(tmp)
			return resource.UserErrorf("ModuleFetchFailed", "git %s: %v: %s", args[len(args)-2], err, strings.TrimSpace(string(out)))
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
