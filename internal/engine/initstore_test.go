package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// backendRecord is what init writes of a kubernetes backend.
const backendRecord = `{"version":3,"backend":{"type":"kubernetes","config":{"secret_suffix":"first","namespace":"ns"},"hash":42}}`

// initialised writes into dir what terraform init leaves: installed providers, a
// module, the backend record (when record is not empty) and the lock file.
func initialised(t *testing.T, dir, record string) {
	t.Helper()
	files := map[string]string{dataDir + "/providers/h/ns/p/1.0.0/os_arch/terraform-provider-p": "binary",
		dataDir + "/modules/modules.json": "{}", lockFile: "# lock"}
	if record != "" {
		files[dataDir+"/"+backendStateFile] = record
	}
	writeFiles(t, dir, files)
}

// TestInitCacheRestore: a workspace gets a copy of its module's cached init with its own
// backend settings; what cannot be restored is left to a real init.
func TestInitCacheRestore(t *testing.T) {
	for _, tc := range []struct {
		name    string
		record  string // the cached init's backend record; "-" for no cached init
		backend map[string]string
		err     string
		want    string // the restored backend record, "" for none
	}{
		{name: "no init cached", record: "-", err: errNoInit.Error()},
		{name: "own backend settings", record: backendRecord, backend: map[string]string{"secret_suffix": "second"},
			want: `"secret_suffix": "second"`},
		{name: "a module without a backend", record: ""},
		{name: "settings for a module without a backend", record: "", backend: map[string]string{"path": "x"}, err: "no backend to configure"},
		{name: "a setting the record lacks", record: backendRecord, backend: map[string]string{"path": "x"}, err: `no setting "path"`},
		{name: "a record that does not decode", record: "{", err: "decode cached backend record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newInitCache(filepath.Join(t.TempDir(), "cache"))
			if err != nil {
				t.Fatal(err)
			}
			if tc.record != "-" {
				first := t.TempDir()
				initialised(t, first, tc.record)
				c.save("mod", first)
			}
			ws := t.TempDir()
			writeFiles(t, ws, map[string]string{dataDir + "/stale": "from an old init"})
			err = c.restore("mod", ws, tc.backend)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("restore: %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := listFiles(t, ws)
			if _, ok := got[dataDir+"/stale"]; ok || got[lockFile] != "# lock" || got[dataDir+"/modules/modules.json"] != "{}" {
				t.Errorf("restored files: %v", got)
			}
			if record := got[dataDir+"/"+backendStateFile]; tc.want == "" && record != "" || !strings.Contains(record, tc.want) {
				t.Errorf("backend record %q, want %q", record, tc.want)
			}
		})
	}
}

// TestInitCacheSaveAndForget: the first init of a module is kept (a later one does not
// replace it), providers are shared by hard link and other files copied; forgetting
// the module leaves the next workspace to a real init.
func TestInitCacheSaveAndForget(t *testing.T) {
	c, err := newInitCache(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	first, later := t.TempDir(), t.TempDir()
	initialised(t, first, backendRecord)
	initialised(t, later, strings.Replace(backendRecord, "first", "later", 1))
	c.save("mod", first)
	c.save("mod", later)
	ws := t.TempDir()
	if err := c.restore("mod", ws, nil); err != nil {
		t.Fatal(err)
	}
	if got := listFiles(t, ws)[dataDir+"/"+backendStateFile]; !strings.Contains(got, `"first"`) {
		t.Errorf("restored record %s, want the first init's", got)
	}
	for rel, shared := range map[string]bool{dataDir + "/providers/h/ns/p/1.0.0/os_arch/terraform-provider-p": true, dataDir + "/modules/modules.json": false} {
		a, _ := os.Stat(filepath.Join(first, rel))
		b, _ := os.Stat(filepath.Join(ws, rel))
		if a == nil || b == nil || os.SameFile(a, b) != shared {
			t.Errorf("%s: shared %v, want %v", rel, a != nil && b != nil && os.SameFile(a, b), shared)
		}
	}
	c.forget("mod")
	if err := c.restore("mod", t.TempDir(), nil); !errors.Is(err, errNoInit) {
		t.Errorf("after forget: %v, want errNoInit", err)
	}
}

// TestNewInitCacheEmpties: an engine starts without the inits of its last run.
func TestNewInitCacheEmpties(t *testing.T) {
	root := filepath.Join(t.TempDir(), "cache")
	writeFiles(t, root, map[string]string{"old/" + lockFile: "x"})
	if _, err := newInitCache(root); err != nil {
		t.Fatal(err)
	}
	if got := listFiles(t, root); len(got) != 0 {
		t.Errorf("cache after start: %v", got)
	}
}

// TestCopyTreeLinks: a relative symbolic link points at the same absolute target in the
// copy; modes survive the copy.
func TestCopyTreeLinks(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	writeFiles(t, src, map[string]string{"bin/tool": "x", "data": "y"})
	if err := os.Chmod(filepath.Join(src, "bin/tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("bin/tool", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	target, err := os.Readlink(filepath.Join(dst, "link"))
	if err != nil || target != filepath.Join(src, "bin/tool") {
		t.Errorf("link points at %q (%v), want %s", target, err, filepath.Join(src, "bin/tool"))
	}
	if st, err := os.Stat(filepath.Join(dst, "bin/tool")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("copied tool: %v, %v", st, err)
	}
	if err := copyTree(filepath.Join(src, "absent"), dst); err == nil {
		t.Error("copying a missing tree gave no error")
	}
}

// TestInitStamp: one workspace's init is named by its module and its backend settings,
// whatever their order.
func TestInitStamp(t *testing.T) {
	base := initStamp("m", map[string]string{"a": "1", "b": "2"})
	for _, tc := range []struct {
		name    string
		module  string
		backend map[string]string
		same    bool
	}{
		{"same settings", "m", map[string]string{"b": "2", "a": "1"}, true},
		{"another value", "m", map[string]string{"a": "1", "b": "3"}, false},
		{"another module", "n", map[string]string{"a": "1", "b": "2"}, false},
		{"a setting less", "m", map[string]string{"a": "1"}, false},
	} {
		if got := initStamp(tc.module, tc.backend) == base; got != tc.same {
			t.Errorf("%s: same %v, want %v", tc.name, got, tc.same)
		}
	}
	if initStamp("m", nil) != initStamp("m", map[string]string{}) {
		t.Error("no settings and empty settings differ")
	}
}

// TestModuleChecksum: workspaces share an init when all but their input values, the
// binary and the CLI config are the same.
func TestModuleChecksum(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "terraform.tfrc")
	writeFiles(t, filepath.Dir(cfg), map[string]string{"terraform.tfrc": "mirror a"})
	e := &Engine{execPath: "/bin/terraform", cliConfig: cfg}
	ws := func(files map[string]string) Workspace {
		out := map[string][]byte{}
		for k, v := range files {
			out[k] = []byte(v)
		}
		return Workspace{Files: out}
	}
	base := e.moduleChecksum(ws(map[string]string{"main.tf": "m", "ab": "c", varsFile: `{"name":"a"}`}))
	for _, tc := range []struct {
		name  string
		e     *Engine
		files map[string]string
		same  bool
	}{
		{"other input values", e, map[string]string{"main.tf": "m", "ab": "c", varsFile: `{"name":"b"}`}, true},
		{"no input values", e, map[string]string{"main.tf": "m", "ab": "c"}, true},
		{"another file content", e, map[string]string{"main.tf": "n", "ab": "c"}, false},
		{"a file boundary moved", e, map[string]string{"main.tf": "m", "a": "bc"}, false},
		{"another binary", &Engine{execPath: "/bin/tofu", cliConfig: cfg}, map[string]string{"main.tf": "m", "ab": "c"}, false},
	} {
		if got := tc.e.moduleChecksum(ws(tc.files)) == base; got != tc.same {
			t.Errorf("%s: same %v, want %v", tc.name, got, tc.same)
		}
	}
	writeFiles(t, filepath.Dir(cfg), map[string]string{"terraform.tfrc": "mirror b"})
	if e.moduleChecksum(ws(map[string]string{"main.tf": "m", "ab": "c"})) == base {
		t.Error("another CLI config must be another init")
	}
	if diff := cmp.Diff(64, len(base)); diff != "" {
		t.Errorf("checksum length (-want +got):\n%s", diff)
	}
}
