package engine

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"terraplane.io/terraplane/internal/holder"
)

// writeFiles writes files (slash paths) below dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// listFiles lists the regular files below dir, slash paths, sorted, with their content.
func listFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSyncFiles: the workspace holds exactly the rendered files besides terraform's own
// data and the engine's markers; a stale file, a leftover secret variables file
// among them, goes.
func TestSyncFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ws")
	own := map[string]string{
		initStampFile: "stamp", planFile: "plan", lockFile: "lock", dataDir + "/providers/p": "bin", dataDir + "/terraform.tfstate": "backend",
		fullSchemaFile: "", erroredStateFile: "errored", "terraform.tfstate": "state", "terraform.tfstate.backup": "backup",
	}
	writeFiles(t, dir, own)
	writeFiles(t, dir, map[string]string{"old.tf": "stale", "modules/old/main.tf": "stale", secretVarsFile: `{"pw":"x"}`,
		"main.tf": "before", "sub/terraform.tfstate": "not terraform's"})
	files := map[string][]byte{"main.tf": []byte("after"), "modules/vpc/main.tf": []byte("vpc"), "terraform.tfvars.json": []byte("{}")}
	if err := syncFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"main.tf": "after", "modules/vpc/main.tf": "vpc", "terraform.tfvars.json": "{}"}
	for k, v := range own {
		want[k] = v
	}
	if diff := cmp.Diff(want, listFiles(t, dir)); diff != "" {
		t.Errorf("workspace files (-want +got):\n%s", diff)
	}
}

// TestSyncLeavesUnchangedFilesAlone: a file whose content is the same is not written
// again (terraform would see a new modification time), a changed one is.
func TestSyncLeavesUnchangedFilesAlone(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"same.tf": "x", "changed.tf": "old"})
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, f := range []string{"same.tf", "changed.tf"} {
		if err := os.Chtimes(filepath.Join(dir, f), past, past); err != nil {
			t.Fatal(err)
		}
	}
	if err := syncFiles(dir, map[string][]byte{"same.tf": []byte("x"), "changed.tf": []byte("new")}); err != nil {
		t.Fatal(err)
	}
	for f, rewritten := range map[string]bool{"same.tf": false, "changed.tf": true} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if got := !st.ModTime().Equal(past); got != rewritten {
			t.Errorf("%s: rewritten %v, want %v", f, got, rewritten)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, st.Mode().Perm())
		}
	}
}

// TestKeptNames: which names in a workspace's top level are terraform's or the engine's.
func TestKeptNames(t *testing.T) {
	var got []string
	for _, name := range []string{initStampFile, planFile, lockFile, dataDir, fullSchemaFile, erroredStateFile, "terraform.tfstate",
		"terraform.tfstate.backup", secretVarsFile, "main.tf", "terraform.tfvars.json", "sub/terraform.tfstate", ".terraform/x"} {
		if kept(name) {
			got = append(got, name)
		}
	}
	want := []string{initStampFile, planFile, lockFile, dataDir, fullSchemaFile, erroredStateFile, "terraform.tfstate", "terraform.tfstate.backup"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
}

// TestWorkspaceIDs: an id that is empty or holds a path separator is refused before
// anything on disk is touched; Remove deletes a workspace's directory.
func TestWorkspaceIDs(t *testing.T) {
	work := t.TempDir()
	e := &Engine{opts: Options{WorkDir: work}}
	writeFiles(t, work, map[string]string{"ws/main.tf": "x", "other/main.tf": "y"})
	for _, id := range []string{"", "../other", `a\b`, "a/b"} {
		if err := e.Remove(id); err == nil {
			t.Errorf("Remove(%q) accepted", id)
		}
		if _, _, err := e.prepare(t.Context(), Workspace{ID: id}); err == nil || e.Busy(id) {
			t.Errorf("prepare(%q): %v, busy %v", id, err, e.Busy(id))
		}
	}
	if err := e.Remove("ws"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"other/main.tf": "y"}, listFiles(t, work)); diff != "" {
		t.Errorf("after Remove (-want +got):\n%s", diff)
	}
}

// TestWriteSecretVars: the secret values are in a file only the controller may read,
// where terraform loads them by itself, until the returned func removes it.
func TestWriteSecretVars(t *testing.T) {
	dir := t.TempDir()
	remove, err := writeSecretVars(dir, map[string]any{"pw": "hunter22", "n": 3})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, secretVarsFile)
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("secret variables file: %v, %v", st, err)
	}
	if diff := cmp.Diff(map[string]string{secretVarsFile: `{"n":3,"pw":"hunter22"}`}, listFiles(t, dir)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	remove()
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the file outlived its command: %v", err)
	}
	if _, err := writeSecretVars(dir, map[string]any{"f": func() {}}); err == nil {
		t.Error("a value that does not encode was accepted")
	}
	if _, err := writeSecretVars(filepath.Join(dir, "absent"), map[string]any{}); err == nil {
		t.Error("a missing workspace directory was accepted")
	}
}

// TestEnv: terraform gets the CLI config, no checkpoint calls, the controller's basic and
// proxy settings, the lock holder's id (what terraform starts can be found should the
// controller die), and the workspace's own environment over them; nothing else of the
// controller's environment.
func TestEnv(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://proxy:3128")
	t.Setenv("HOME", "/home/controller")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "the controller's own")
	e := &Engine{cliConfig: "/work/terraform.tfrc"}
	env := e.env(Workspace{Env: map[string]string{"AWS_SECRET_ACCESS_KEY": "the workspace's", "HOME": "/ws"}})
	for k, want := range map[string]string{
		"TF_CLI_CONFIG_FILE": "/work/terraform.tfrc", "CHECKPOINT_DISABLE": "1", "HTTPS_PROXY": "http://proxy:3128",
		"HOME": "/ws", "AWS_SECRET_ACCESS_KEY": "the workspace's", holder.Env: holder.Self().ID,
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	for k := range env {
		if !slices.Contains(passEnv, k) && k != "TF_CLI_CONFIG_FILE" && k != "CHECKPOINT_DISABLE" && k != "AWS_SECRET_ACCESS_KEY" && k != holder.Env {
			t.Errorf("%s passed to terraform", k)
		}
	}
	if bare := e.env(Workspace{}); bare["AWS_SECRET_ACCESS_KEY"] != "" {
		t.Error("the controller's credentials reached terraform")
	}
}

// TestEnvNamesTheLocksHolder: with a locker, terraform's environment carries the id the
// locker's locks name their holder by (a locker has an id of its own, not the process's),
// so that when this process dies, the next holder finds, by that id, what its runs left
// running, and stops it before taking the lock over.
func TestEnvNamesTheLocksHolder(t *testing.T) {
	for name, tc := range map[string]struct {
		locker StateLocker
		want   string
	}{
		"a locker's":             {&fakeLocker{}, "fake-locker"},
		"no locker: the process": {nil, holder.Self().ID},
	} {
		t.Run(name, func(t *testing.T) {
			e := &Engine{opts: Options{Locker: tc.locker}}
			if got := e.env(Workspace{})[holder.Env]; got != tc.want {
				t.Errorf("%s = %q, want %q", holder.Env, got, tc.want)
			}
		})
	}
}
