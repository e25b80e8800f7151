package modsource

import (
	"context"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	corev1 "k8s.io/api/core/v1"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// commitModule writes main.tf with one variable into the repository at dir and commits it.
func commitModule(t *testing.T, repo *git.Repository, dir, variable string) plumbing.Hash {
	t.Helper()
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	fs := wt.Filesystem
	if err := fs.MkdirAll("modules/db", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create("modules/db/main.tf")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write([]byte(`variable "` + variable + `" {}`))
	_ = f.Close()
	if _, err := wt.Add("modules/db/main.tf"); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit(variable, &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestGitBranchIsLookedUpAgainAfterTheRefreshInterval(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	first := commitModule(t, repo, dir, "first")
	if _, err := repo.CreateTag("v1", first, nil); err != nil {
		t.Fatal(err)
	}
	head, _ := repo.Head()
	branch := head.Name().Short()
	l := &Loader{CacheDir: t.TempDir(), RefreshInterval: time.Hour, AllowInsecure: true}
	ctx := context.Background()
	src := func(ref string) terraformv1.ModuleSource {
		return terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: "file://" + dir, Ref: ref, Path: "modules/db"}}
	}
	ld, err := l.LoadSource(ctx, nil, "ns", src(branch))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ld.Variable("first"); !ok || ld.Revision != first.String() || !ld.Moving {
		t.Fatalf("got %+v at %s (moving %v), want first at %s", ld.Variables, ld.Revision, ld.Moving, first)
	}
	second := commitModule(t, repo, dir, "second")
	if ld, _ = l.LoadSource(ctx, nil, "ns", src(branch)); ld.Revision != first.String() {
		t.Fatalf("within the refresh interval the branch stays at %s, got %s", first, ld.Revision)
	}
	l.RefreshInterval = time.Nanosecond
	if ld, _ = l.LoadSource(ctx, nil, "ns", src(branch)); ld.Revision != second.String() {
		t.Fatalf("after the refresh interval the branch moves to %s, got %s", second, ld.Revision)
	}
	pinned, err := l.LoadSource(ctx, nil, "ns", src(first.String()))
	if err != nil || pinned.Moving || pinned.Revision != first.String() {
		t.Fatalf("a commit is pinned: %+v %v", pinned, err)
	}
	if _, ok := pinned.Variable("first"); !ok {
		t.Fatalf("the pinned commit has the first module: %+v", pinned.Variables)
	}
	tagged, err := l.LoadSource(ctx, nil, "ns", src("v1"))
	if err != nil || tagged.Revision != first.String() {
		t.Fatalf("tag v1: %+v %v", tagged, err)
	}
	_, err = l.LoadSource(ctx, nil, "ns", src("no-such-ref"))
	if u, ok := resource.AsUserError(err); !ok || u.Reason != ReasonNotFound {
		t.Fatalf("a missing ref: got %v", err)
	}
}

func TestGitAuthFromSecret(t *testing.T) {
	secret := func(kv ...string) *corev1.Secret {
		s := &corev1.Secret{Data: map[string][]byte{}}
		for i := 0; i < len(kv); i += 2 {
			s.Data[kv[i]] = []byte(kv[i+1])
		}
		return s
	}
	tmp := t.TempDir()
	if a, err := gitAuth(secret(KeyPassword, "tok"), "https://git.example.com/r.git", tmp); err != nil || a.String() != "http-basic-auth - git:*******" {
		t.Errorf("a token as password: %v %v", a, err)
	}
	if a, err := gitAuth(secret(KeyUsername, "me", KeyPassword, "pw"), "https://git.example.com/r.git", tmp); err != nil || !strings.HasPrefix(a.String(), "http-basic-auth - me:") {
		t.Errorf("basic auth: %v %v", a, err)
	}
	if a, err := gitAuth(secret(KeyBearerToken, "tok"), "https://git.example.com/r.git", tmp); err != nil || a.Name() != "http-token-auth" {
		t.Errorf("bearer: %v %v", a, err)
	}
	for name, tc := range map[string]struct {
		s    *corev1.Secret
		url  string
		want string
	}{
		"https without keys":    {secret(KeyUsername, "me"), "https://git.example.com/r.git", "needs username and password"},
		"ssh without identity":  {secret(KeyKnownHosts, "x"), "ssh://git@git.example.com/r.git", "needs identity"},
		"ssh without knownhost": {secret(KeyIdentity, "x"), "git@git.example.com:r.git", "needs known_hosts"},
		"ssh with a bad key":    {secret(KeyIdentity, "not a key", KeyKnownHosts, "x"), "ssh://git@git.example.com/r.git", "not a usable private key"},
	} {
		if _, err := gitAuth(tc.s, tc.url, tmp); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", name, err, tc.want)
		}
	}
}

func TestConfigMapTarball(t *testing.T) {
	tgz, err := WriteTarball(map[string][]byte{"main.tf": []byte(`module "vpc" { source = "./modules/vpc" }`), "modules/vpc/main.tf": []byte(`variable "cidr" {}`)})
	if err != nil {
		t.Fatal(err)
	}
	files, err := configMapFiles(&corev1.ConfigMap{BinaryData: map[string][]byte{TarballKey: tgz}})
	if err != nil || len(files) != 2 || !strings.Contains(string(files["modules/vpc/main.tf"]), "cidr") {
		t.Fatalf("got %v, %v", files, err)
	}
	if _, err := configMapFiles(&corev1.ConfigMap{BinaryData: map[string][]byte{TarballKey: tgz}, Data: map[string]string{"x.tf": ""}}); err == nil {
		t.Error("a tarball beside other keys must be refused")
	}
	if _, err := configMapFiles(&corev1.ConfigMap{BinaryData: map[string][]byte{TarballKey: []byte("not gzip")}}); err == nil {
		t.Error("a broken tarball must be refused")
	}
}
