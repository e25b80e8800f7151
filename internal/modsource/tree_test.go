package modsource

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// TestGitSubdirectoryCallingItsSource: a module at a git path that calls ../../ (as the
// submodules of public modules call their top-level module) is read with the whole
// repository, rooted at its path; one that calls past the repository is refused by
// LocalModules, naming the call.
func TestGitSubdirectoryCallingItsSource(t *testing.T) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"main.tf":                 `variable "name" {}`,
		"modules/http-80/main.tf": `variable "name" {}` + "\n" + `module "sg" {` + "\n" + `  source = "../../"` + "\n" + `  name = var.name` + "\n}",
		"modules/escape/main.tf":  `module "up" {` + "\n" + `  source = "../../../elsewhere"` + "\n}",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wt, _ := repo.Worktree()
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("c", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	l := &Loader{CacheDir: t.TempDir(), AllowInsecure: true}
	load := func(path string) *Loaded {
		ld, err := l.LoadSource(context.Background(), nil, "ns", terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: "file://" + dir, Ref: h.String(), Path: path}})
		if err != nil {
			t.Fatal(err)
		}
		return ld
	}
	sg := load("modules/http-80")
	if _, problems := sg.LocalModules(); sg.Dir != "modules/http-80" || len(problems) > 0 {
		t.Errorf("Dir %q, problems %v", sg.Dir, problems)
	}
	if _, ok := sg.Outside["main.tf"]; !ok {
		t.Errorf("the repository's top-level module is not kept: %v", sg.Outside)
	}
	_, problems := load("modules/escape").LocalModules()
	if len(problems) != 1 || !strings.Contains(problems[0], "calls ../../../elsewhere, outside the module source's files") {
		t.Errorf("a call out of the repository: %v", problems)
	}
}
