package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCLIConfigData: where terraform installs providers from, for each combination of
// options, and the shared plugin cache made only for downloads.
func TestCLIConfigData(t *testing.T) {
	work, mirror := t.TempDir(), t.TempDir()
	file := filepath.Join(work, "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(work, "missing")
	defaultCache := filepath.Join(work, ".plugin-cache")
	for _, tc := range []struct {
		name string
		opts Options
		want cliConfigData
		err  string
	}{
		{name: "nothing", want: cliConfigData{}},
		{name: "a mirror", opts: Options{PluginMirror: mirror}, want: cliConfigData{Mirror: mirror}},
		{name: "a missing mirror and nothing else", opts: Options{PluginMirror: missing}, want: cliConfigData{Mirror: missing}},
		{name: "a file for a mirror and nothing else", opts: Options{PluginMirror: file}, want: cliConfigData{Mirror: file}},
		{name: "a missing mirror and downloads", opts: Options{PluginMirror: missing, AllowDirect: true},
			want: cliConfigData{Direct: true, PluginCache: defaultCache}},
		{name: "a mirror and downloads into a cache", opts: Options{PluginMirror: mirror, AllowDirect: true, PluginCacheDir: filepath.Join(work, "c")},
			want: cliConfigData{Mirror: mirror, Direct: true, PluginCache: filepath.Join(work, "c")}},
		{name: "a network mirror gets its slash", opts: Options{NetworkMirror: "https://m.example/tf"},
			want: cliConfigData{NetworkMirror: "https://m.example/tf/", PluginCache: defaultCache}},
		{name: "one slash only", opts: Options{NetworkMirror: "https://m.example/tf/"},
			want: cliConfigData{NetworkMirror: "https://m.example/tf/", PluginCache: defaultCache}},
		{name: "plain http", opts: Options{NetworkMirror: "http://m.example/"}, err: "not an https URL"},
		{name: "no host", opts: Options{NetworkMirror: "https:///tf"}, err: "not an https URL"},
		{name: "not a URL", opts: Options{NetworkMirror: "https://m.example:port/"}, err: "not an https URL"},
		{name: "a cache that cannot be made", opts: Options{AllowDirect: true, PluginCacheDir: filepath.Join(file, "cache")}, err: "create plugin cache"},
	} {
		tc.opts.WorkDir = work
		got, err := (&Engine{opts: tc.opts}).cliConfigData()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if diff := cmp.Diff(tc.want, got); err != nil || diff != "" {
			t.Errorf("%s: %v (-want +got):\n%s", tc.name, err, diff)
		}
		if got.PluginCache != "" {
			if st, err := os.Stat(got.PluginCache); err != nil || !st.IsDir() {
				t.Errorf("%s: the plugin cache was not made: %v", tc.name, err)
			}
		}
	}
}

// TestWriteCLIConfigOnlyWhenChanged: the CLI config file is written once for the same
// options (its checksum keys shared inits) and again when they change.
func TestWriteCLIConfigOnlyWhenChanged(t *testing.T) {
	work := t.TempDir()
	e := &Engine{opts: Options{WorkDir: work, PluginMirror: t.TempDir()}}
	path, err := e.writeCLIConfig()
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.Stat(path)
	if first.Mode().Perm() != 0o600 || path != filepath.Join(work, "terraform.tfrc") {
		t.Errorf("CLI config at %s with mode %v", path, first.Mode().Perm())
	}
	past := first.ModTime().Add(-time.Minute)
	_ = os.Chtimes(path, past, past)
	if _, err := e.writeCLIConfig(); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Stat(path); !again.ModTime().Equal(past) {
		t.Error("the same CLI config was written again")
	}
	e.opts.AllowDirect = true
	if _, err := e.writeCLIConfig(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "direct {}") {
		t.Errorf("a changed CLI config was not written:\n%s", b)
	}
}
