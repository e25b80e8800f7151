package modsource

import (
	"context"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestAllowListMatchesHostThenPathSegments: an entry admits a source only with the same
// scheme, host and port, and a path at or below the entry's on segment boundaries. Git
// URLs are given as they are, OCI references after oci://.
func TestAllowListMatchesHostThenPathSegments(t *testing.T) {
	l := &Loader{AllowedSources: []string{
		"https://git.example.com/org",
		"https://git.example.com:8443/team/",
		"git@github.com:acme",
		"ssh://git.internal/platform",
		"oci://ghcr.io/acme",
		"registry.example.com:5000/modules",
		"file:///srv/repos",
	}}
	digest := "@sha256:" + strings.Repeat("a", 64)
	for source, want := range map[string]bool{
		"https://git.example.com/org/repo.git":          true,
		"https://git.example.com/org":                   true,
		"https://git.example.com/org/":                  true,
		"https://GIT.Example.COM/org/repo.git":          true,
		"https://git.example.com:443/org/x.git":         true,
		"https://git.example.com/org/a/../b":            false,
		"https://git.example.com/org-evil/x":            false,
		"https://git.example.com/organisation":          false,
		"https://git.example.com/Org/x":                 false,
		"https://git.example.com":                       false,
		"https://git.example.com/":                      false,
		"https://git.example.com.evil.io/org/x":         false,
		"https://git.example.com@evil.io/org/x":         false,
		"https://evil.io/https://git.example.com/org/x": false,
		"https://evil.io#@git.example.com/org/x":        false,
		"https://evil.io?@git.example.com/org/x":        false,
		"https://git.example.com/org/../evil/x":         false,
		"https://git.example.com/org/%2e%2e/evil/x":     false,
		"https://git.example.com/org/..":                false,
		"http://git.example.com/org/x":                  false,
		"ssh://git@git.example.com/org/x":               false,
		"https://git.example.com:8443/org/x":            false,
		"https://git.example.com:8443/team/x.git":       true,
		"https://git.example.com:8443/team":             true,
		"https://git.example.com/team/x.git":            false,
		"git@github.com:acme/modules.git":               true,
		"git@GitHub.com:acme/modules.git":               true,
		"ssh://git@github.com/acme/modules.git":         true,
		"ssh://git@github.com:22/acme/modules.git":      true,
		"git@github.com:acme-evil/modules.git":          false,
		"git@github.com:acme/../evil/modules.git":       false,
		"ssh://git@github.com:2222/acme/modules.git":    false,
		"https://github.com/acme/modules.git":           false,
		"git@github.com.evil.io:acme/x.git":             false,
		"git@evil.io:github.com:acme/x.git":             false,
		"ssh://git.internal/platform/mods.git":          true,
		"ssh://me@git.internal:22/platform/mods.git":    true,
		"ssh://git.internal/platformx/mods.git":         false,
		"oci://ghcr.io/acme/db:v1":                      true,
		"oci://ghcr.io/acme/team/db" + digest:           true,
		"oci://ghcr.io/acme-evil/db:v1":                 false,
		"oci://ghcr.io.evil.io/acme/db:v1":              false,
		"oci://ghcr.io/evil/acme/db:v1":                 false,
		"oci://registry.example.com:5000/modules/db:v1": true,
		"oci://registry.example.com/modules/db:v1":      false,
		"oci://registry.example.com:5000/modules2/db":   false,
		"file:///srv/repos/team.git":                    true,
		"file:///srv/repos-evil/team.git":               false,
		"file:///srv/repos/../../etc":                   false,
		"file:///srv":                                   false,
	} {
		if got := l.allowed(source); got != want {
			t.Errorf("%s: allowed %v, want %v", source, got, want)
		}
	}

	host := &Loader{AllowedSources: []string{"https://git.example.com"}}
	for source, want := range map[string]bool{
		"https://git.example.com/any/repo.git":  true,
		"https://git.example.com.evil.io/x.git": false,
		"https://git.example.com:8443/x.git":    false,
		"https://git.example.co/x.git":          false,
		"https://git.example.com@evil.io/x.git": false,
	} {
		if got := host.allowed(source); got != want {
			t.Errorf("host-only entry, %s: allowed %v, want %v", source, got, want)
		}
	}
	if !(&Loader{}).allowed("https://anything.example/x.git") {
		t.Error("without an allow-list every https source is allowed")
	}
}

// TestInsecureSourcesNeedTheFlag: http:// and file:// git sources are refused, before
// anything is fetched, unless the controller allows insecure module sources.
func TestInsecureSourcesNeedTheFlag(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	repo := initRepo(t, dir)
	commitModule(t, repo, dir, "local")
	head, _ := repo.Head()
	for _, url := range []string{"file://" + dir, "http://127.0.0.1:1/team.git"} {
		src := terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: url, Ref: head.Name().Short(), Path: "modules/db"}}
		_, err := (&Loader{CacheDir: t.TempDir()}).LoadSource(ctx, nil, "ns", src)
		u, ok := resource.AsUserError(err)
		if !ok || u.Reason != ReasonNotAllowed || !strings.Contains(u.Message, url) || !strings.Contains(u.Message, "--allow-insecure-module-sources") {
			t.Errorf("%s: got %v, want %s naming the source and the flag", url, err, ReasonNotAllowed)
		}
	}
	src := terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: "file://" + dir, Ref: head.Name().Short(), Path: "modules/db"}}
	if _, err := (&Loader{CacheDir: t.TempDir(), AllowInsecure: true}).LoadSource(ctx, nil, "ns", src); err != nil {
		t.Errorf("with insecure sources allowed a file:// repository loads: %v", err)
	}
}

// initRepo makes a git repository at dir.
func initRepo(t *testing.T, dir string) *git.Repository {
	t.Helper()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}
