package modsource

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/memfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// TestFromConfigMap: a ConfigMap's module is read once per resourceVersion; a missing
// ConfigMap and one without a module are user errors naming it.
func TestFromConfigMap(t *testing.T) {
	ctx := context.Background()
	cm := func(name string, data map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}, Data: data}
	}
	c := fake.NewClientBuilder().WithObjects(
		cm("db", map[string]string{"main.tf": `variable "size" {}`}),
		cm("empty", map[string]string{"README.md": "no module here"}),
	).Build()
	l := &Loader{}
	load := func(name string) (*Loaded, error) {
		return l.LoadSource(ctx, c, "ns", terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: name}})
	}
	first, err := load("db")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := first.Variable("size"); !ok || first.Moving || first.Revision == "" {
		t.Errorf("got %+v at %q (moving %v), want size at the resourceVersion", first.Variables, first.Revision, first.Moving)
	}
	if again, _ := load("db"); again.Module != first.Module {
		t.Error("an unchanged ConfigMap was read again")
	}
	updated := &corev1.ConfigMap{}
	_ = c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "db"}, updated)
	updated.Data = map[string]string{"main.tf": `variable "count" {}`}
	if err := c.Update(ctx, updated); err != nil {
		t.Fatal(err)
	}
	if changed, err := load("db"); err != nil || changed.Revision == first.Revision || changed.Variables[0].Name != "count" {
		t.Errorf("after an update: %+v, %v; want the new module", changed, err)
	}
	for name, want := range map[string][2]string{
		"missing": {ReasonNotFound, "ConfigMap ns/missing holding the module does not exist"},
		"empty":   {ReasonInvalidModule, "module in ConfigMap ns/empty: module has no .tf or .tf.json files"},
	} {
		_, err := load(name)
		if reason, msg := userError(t, err); reason != want[0] || msg != want[1] {
			t.Errorf("%s: %s %q, want %s %q", name, reason, msg, want[0], want[1])
		}
	}
	_, err = l.LoadSource(ctx, c, "ns", terraformv1.ModuleSource{})
	if reason, _ := userError(t, err); reason != ReasonInvalidSource {
		t.Errorf("a source with nothing set: %v", err)
	}
}

// TestSecret: no secretRef means no Secret; a missing one is a user error; one that
// exists keys the caches by namespace, name and resourceVersion.
func TestSecret(t *testing.T) {
	ctx := context.Background()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "creds"}}
	c := fake.NewClientBuilder().WithObjects(s).Build()
	_ = c.Get(ctx, client.ObjectKeyFromObject(s), s)
	if got, id, err := secret(ctx, c, "ns", nil); got != nil || id != "" || err != nil {
		t.Errorf("no secretRef: %v, %q, %v", got, id, err)
	}
	got, id, err := secret(ctx, c, "ns", &common.LocalReference{Name: "creds"})
	if err != nil || got.Name != "creds" || id != "ns/creds@"+s.ResourceVersion {
		t.Errorf("a Secret: %v, %q, %v", got, id, err)
	}
	_, _, err = secret(ctx, c, "other", &common.LocalReference{Name: "creds"})
	if reason, msg := userError(t, err); reason != ReasonSecretNotFound || !strings.Contains(msg, "Secret other/creds") {
		t.Errorf("a Secret in another namespace: %s %q", reason, msg)
	}
}

// TestConfigMapFiles: keys of data and binaryData are files; a tarball stands alone.
func TestConfigMapFiles(t *testing.T) {
	tgz, err := WriteTarball(map[string][]byte{"main.tf": []byte("x"), "sub/a.tf": []byte("y")})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cm   corev1.ConfigMap
		want map[string][]byte
		err  string
	}{
		{name: "data and binary data", cm: corev1.ConfigMap{Data: map[string]string{"main.tf": "a"}, BinaryData: map[string][]byte{"logo.png": {1, 2}}},
			want: map[string][]byte{"main.tf": []byte("a"), "logo.png": {1, 2}}},
		{name: "empty", cm: corev1.ConfigMap{}, want: map[string][]byte{}},
		{name: "tarball", cm: corev1.ConfigMap{BinaryData: map[string][]byte{TarballKey: tgz}},
			want: map[string][]byte{"main.tf": []byte("x"), "sub/a.tf": []byte("y")}},
		{name: "tarball and a binary key", cm: corev1.ConfigMap{BinaryData: map[string][]byte{TarballKey: tgz, "x.tf": nil}},
			err: "holds module.tar.gz and other keys"},
	} {
		got, err := configMapFiles(&tc.cm)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if diff := cmp.Diff(tc.want, got); err != nil || diff != "" {
			t.Errorf("%s: %v (-want +got):\n%s", tc.name, err, diff)
		}
	}
	again, _ := WriteTarball(map[string][]byte{"sub/a.tf": []byte("y"), "main.tf": []byte("x")})
	if string(again) != string(tgz) {
		t.Error("the same files gave another tarball")
	}
}

// TestFetchSpecs: a pinned commit is fetched by itself, a full ref name as written, a
// short name as a tag first, then as a branch.
func TestFetchSpecs(t *testing.T) {
	sha := strings.Repeat("a", 40)
	for _, tc := range []struct {
		ref, commit string
		want        []config.RefSpec
	}{
		{sha, sha, []config.RefSpec{config.RefSpec(sha + ":refs/heads/pinned")}},
		{"refs/pull/7/head", sha, []config.RefSpec{"+refs/pull/7/head:refs/pull/7/head"}},
		{"v1.2.0", sha, []config.RefSpec{"+refs/tags/v1.2.0:refs/tags/v1.2.0", "+refs/heads/v1.2.0:refs/heads/v1.2.0"}},
		{strings.Repeat("A", 40), sha, []config.RefSpec{config.RefSpec("+refs/tags/" + strings.Repeat("A", 40) + ":refs/tags/" + strings.Repeat("A", 40)),
			config.RefSpec("+refs/heads/" + strings.Repeat("A", 40) + ":refs/heads/" + strings.Repeat("A", 40))}},
	} {
		if diff := cmp.Diff(tc.want, fetchSpecs(tc.ref, tc.commit)); diff != "" {
			t.Errorf("fetchSpecs(%q) (-want +got):\n%s", tc.ref, diff)
		}
	}
}

// TestSubtree: the files below a directory, named relative to it, and nothing beside it.
func TestSubtree(t *testing.T) {
	files := map[string][]byte{"main.tf": []byte("r"), "modules/db/main.tf": []byte("d"), "modules/db/sub/x.tf": []byte("x"), "modules/dbx/main.tf": []byte("n")}
	for dir, want := range map[string]map[string][]byte{
		"":           files,
		"modules/db": {"main.tf": []byte("d"), "sub/x.tf": []byte("x")},
		"absent":     {},
	} {
		if diff := cmp.Diff(want, subtree(files, dir)); diff != "" {
			t.Errorf("subtree(%q) (-want +got):\n%s", dir, diff)
		}
	}
}

// TestTreeFiles: a commit's files below a path, within the module limits; a symlink or
// a path that is no directory is refused.
func TestTreeFiles(t *testing.T) {
	commit := memoryCommit(t, map[string]string{"main.tf": "root", "modules/db/main.tf": "db", "modules/db/vars.tf": "v"},
		map[string]string{"modules/link/main.tf": "../../main.tf"})
	for _, tc := range []struct {
		dir    string
		limits bool
		want   map[string][]byte
		err    string
	}{
		{dir: "modules/db", want: map[string][]byte{"main.tf": []byte("db"), "vars.tf": []byte("v")}},
		{dir: "modules/none", err: "path modules/none is not a directory in r.git"},
		{dir: "main.tf", err: "path main.tf is not a directory"},
		{dir: "", err: "modules/link/main.tf in r.git is a symlink"},
		{dir: "modules/db", limits: true, err: "module at r.git//modules/db is over the limits"},
	} {
		if tc.limits {
			saved := moduleLimits
			moduleLimits.MaxFiles = 1
			t.Cleanup(func() { moduleLimits = saved })
		}
		got, err := treeFiles(commit, tc.dir, "r.git")
		if tc.err != "" {
			if reason, msg := userError(t, err); reason != ReasonInvalidModule || !strings.Contains(msg, tc.err) {
				t.Errorf("%q: %s %q, want %s with %q", tc.dir, reason, msg, ReasonInvalidModule, tc.err)
			}
			continue
		}
		if diff := cmp.Diff(tc.want, got); err != nil || diff != "" {
			t.Errorf("%q: %v (-want +got):\n%s", tc.dir, err, diff)
		}
	}
}

// memoryCommit commits files and symlinks (path to target) in a repository in memory.
func memoryCommit(t *testing.T, files, links map[string]string) *object.Commit {
	t.Helper()
	repo, err := git.Init(memory.NewStorage(), memfs.New())
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	for name, content := range files {
		f, err := wt.Filesystem.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.Write([]byte(content))
		_ = f.Close()
	}
	for name, target := range links {
		if err := wt.Filesystem.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("c", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(h)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
