package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCLIConfigProviderSources(t *testing.T) {
	work, mirror := t.TempDir(), t.TempDir()
	missing := filepath.Join(work, "no-mirror")
	for _, tc := range []struct {
		name    string
		opts    Options
		want    []string
		notWant []string
		err     string
	}{
		{name: "filesystem mirror only", opts: Options{PluginMirror: mirror},
			want: []string{"filesystem_mirror", mirror}, notWant: []string{"network_mirror", "direct", "plugin_cache_dir"}},
		{name: "network mirror, no mirror directory", opts: Options{PluginMirror: missing, NetworkMirror: "https://mirror.example.internal/tf"},
			want:    []string{`url = "https://mirror.example.internal/tf/"`, `plugin_cache_dir = "` + filepath.Join(work, ".plugin-cache") + `"`},
			notWant: []string{"filesystem_mirror", "direct"}},
		{name: "downloads with a mirror and a cache", opts: Options{PluginMirror: mirror, AllowDirect: true, PluginCacheDir: filepath.Join(work, "cache")},
			want: []string{"filesystem_mirror", "direct {}", `plugin_cache_dir = "` + filepath.Join(work, "cache") + `"`}},
		{name: "nothing else: the missing mirror stays, init names it", opts: Options{PluginMirror: missing},
			want: []string{"filesystem_mirror", missing}},
		{name: "plain http is refused", opts: Options{NetworkMirror: "http://mirror.example.internal/"}, err: "not an https URL"},
		{name: "a module registry stands in for both public registries", opts: Options{PluginMirror: mirror, ModuleRegistryURL: "https://modules.example.internal/v1/modules"},
			want: []string{`host "registry.terraform.io"`, `host "registry.opentofu.org"`, `"modules.v1"   = "https://modules.example.internal/v1/modules/"`, `"providers.v1" = "/v1/providers/"`}},
		{name: "no module registry, no host block", opts: Options{PluginMirror: mirror}, notWant: []string{"host ", "modules.v1"}},
		{name: "a module registry that is no URL", opts: Options{ModuleRegistryURL: "modules.example.internal"}, err: "not an http or https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.WorkDir = work
			e := &Engine{opts: tc.opts}
			path, err := e.writeCLIConfig()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(raw), w) {
					t.Errorf("CLI config lacks %q:\n%s", w, raw)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(string(raw), w) {
					t.Errorf("CLI config has %q:\n%s", w, raw)
				}
			}
		})
	}
}
