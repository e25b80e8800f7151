package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
)

// maxConfigMapBytes is what a ConfigMap may hold, less room for its metadata.
const maxConfigMapBytes = 900 << 10

// moduleSource is where a command reads a module from: a local directory, or a git or OCI
// source as a ModuleClass names it.
type moduleSource struct {
	// dir is a local directory; empty for git and OCI.
	dir string
	// remote is the git or OCI source.
	remote terraformv1.ModuleSource
	// name is a default name for the class: the directory's or the path's last element.
	name string
}

// parseModuleSource reads a source argument as terraform writes module sources:
//   - oci://REGISTRY/REPO:TAG (or @sha256:...), optionally //PATH inside the artifact;
//   - a git URL (https://, ssh://, file://, git@host:path, or any of them after git::),
//     with //PATH inside the repository and ?ref=TAG|BRANCH|COMMIT (required);
//   - anything else is a local directory.
func parseModuleSource(arg string) (moduleSource, error) {
	switch {
	case strings.HasPrefix(arg, "oci://"):
		ref, path := splitSubdir(strings.TrimPrefix(arg, "oci://"))
		if ref == "" {
			return moduleSource{}, fmt.Errorf("%s names no OCI artifact", arg)
		}
		repo := ref
		if i := strings.LastIndexAny(repo, ":@"); i > strings.LastIndex(repo, "/") {
			repo = repo[:i]
		}
		return moduleSource{remote: terraformv1.ModuleSource{OCI: &terraformv1.OCISource{Ref: ref, Path: path}}, name: lastElem(repo, path)}, nil
	case isGitSource(arg):
		return parseGitSource(strings.TrimPrefix(arg, "git::"))
	}
	return moduleSource{dir: arg}, nil
}

// isGitSource reports whether arg is a git URL rather than a directory.
func isGitSource(arg string) bool {
	if strings.HasPrefix(arg, "git::") || strings.HasPrefix(arg, "git@") {
		return true
	}
	for _, scheme := range []string{"https://", "http://", "ssh://", "file://"} {
		if strings.HasPrefix(arg, scheme) {
			return true
		}
	}
	return false
}

// parseGitSource reads URL[//PATH][?ref=REF].
func parseGitSource(arg string) (moduleSource, error) {
	rest, query, _ := strings.Cut(arg, "?")
	var ref string
	for _, kv := range strings.Split(query, "&") {
		if v, ok := strings.CutPrefix(kv, "ref="); ok {
			ref = v
		}
	}
	if ref == "" {
		return moduleSource{}, fmt.Errorf("git source %s names no ref: add ?ref=TAG (or a branch or commit), as in %s//modules/vpc?ref=v1.2.0", arg, rest)
	}
	scheme, body, hasScheme := strings.Cut(rest, "://")
	if !hasScheme {
		scheme, body = "", rest
	}
	url, path := splitSubdir(body)
	if hasScheme {
		url = scheme + "://" + url
	}
	return moduleSource{remote: terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: url, Ref: ref, Path: path}},
		name: lastElem(strings.TrimSuffix(url, ".git"), path)}, nil
}

// splitSubdir splits s at the first // into what it names and the path inside it.
func splitSubdir(s string) (string, string) {
	if head, path, ok := strings.Cut(s, "//"); ok {
		return head, strings.Trim(path, "/")
	}
	return s, ""
}

// lastElem is the last element of path, else of what.
func lastElem(what, path string) string {
	if path != "" {
		return filepath.Base(path)
	}
	return filepath.Base(strings.TrimRight(strings.ReplaceAll(what, ":", "/"), "/"))
}

// load reads the module: from the directory, or through the same loader the controller
// uses (anonymous access; file:// and http:// allowed, as the source is the user's own).
func (s moduleSource) load(ctx context.Context) (*module.Module, error) {
	if s.dir != "" {
		if st, err := os.Stat(s.dir); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("module directory %s does not exist or is not a directory", s.dir)
		}
		m, err := module.Load(os.DirFS(s.dir), ".")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.dir, err)
		}
		return m, nil
	}
	cache, err := os.MkdirTemp("", "terraplane-module-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(cache)
	loader := &modsource.Loader{CacheDir: cache, AllowInsecure: true}
	return loader.Load(ctx, nil, "", s.remote)
}

// defaultName is the class name a source suggests.
func (s moduleSource) defaultName() string {
	if s.dir == "" {
		return s.name
	}
	abs, err := filepath.Abs(s.dir)
	if err != nil {
		return filepath.Base(s.dir)
	}
	return filepath.Base(abs)
}

// classSource is the ModuleClass's source: the git or OCI source as given, or for a
// directory the ConfigMap that moduleConfigMap makes.
func (s moduleSource) classSource(configMap string) terraformv1.ModuleSource {
	if s.dir == "" {
		return s.remote
	}
	return terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: configMap}}
}

// moduleConfigMap holds a local module for its ModuleClass: one key per file for a flat
// module of text files, else the whole tree (local modules included) as module.tar.gz.
func moduleConfigMap(m *module.Module, name, namespace string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if m.Dir == "" && flat(m.Files) {
		cm.Data = map[string]string{}
		total := 0
		for _, n := range sortedKeys(m.Files) {
			cm.Data[n] = string(m.Files[n])
			total += len(m.Files[n])
		}
		if total <= maxConfigMapBytes {
			return cm, nil
		}
		cm.Data = nil
	}
	tgz, err := modsource.WriteTarball(m.Tree())
	if err != nil {
		return nil, fmt.Errorf("pack the module: %w", err)
	}
	if len(tgz) > maxConfigMapBytes {
		return nil, fmt.Errorf("the module packs to %d KiB, more than a ConfigMap holds: publish it to git or an OCI registry and generate from there", len(tgz)>>10)
	}
	cm.BinaryData = map[string][]byte{"module.tar.gz": tgz}
	return cm, nil
}

// flat reports whether files are text files in one directory, with names a ConfigMap
// takes as keys.
func flat(files map[string][]byte) bool {
	for n, content := range files {
		if !configMapKey.MatchString(n) || !utf8.Valid(content) {
			return false
		}
	}
	return true
}

// configMapKey is what a ConfigMap key may be.
var configMapKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
