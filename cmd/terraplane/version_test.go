package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestVersionFrom: the stamped version wins; without one, a tagged module version, then
// the commit Go recorded (with -dirty), then devel.
func TestVersionFrom(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "a15e128c0ffee0123456789abcdef0123456789a"
	cases := map[string]struct {
		stamped string
		info    *debug.BuildInfo
		want    string
	}{
		"stamped by make":            {"v0.2.0-3-ga15e128-dirty", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}}, "v0.2.0-3-ga15e128-dirty"},
		"a tagged go install":        {"", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}, Settings: vcs(rev, "false")}, "v0.1.0"},
		"a clean checkout":           {"", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "a15e128"},
		"uncommitted changes":        {"", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "a15e128-dirty"},
		"no vcs (-buildvcs=false)":   {"", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		"no build information":       {"", nil, "devel"},
		"a revision too short to be": {"", &debug.BuildInfo{Settings: vcs("abc", "true")}, "devel"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, versionFrom(tc.stamped, tc.info)); d != "" {
				t.Errorf("version (-want +got):\n%s", d)
			}
		})
	}
}

// TestVersionNamesTheBinary: version names the binary it would run for what it is, from
// the first line the binary's own `version` prints: OpenTofu is never called terraform.
func TestVersionNamesTheBinary(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, prints string
		want         string // the second line version prints
		wantJSON     map[string]string
	}{
		{"tofu", "OpenTofu v1.9.1\non linux_amd64\n", "opentofu   1.9.1 (%s)", map[string]string{"opentofu": "1.9.1 (%s)"}},
		{"terraform", "Terraform v1.11.4\non linux_amd64\n", "terraform  1.11.4 (%s)", map[string]string{"terraform": "1.11.4 (%s)"}},
		{"other", "Something v2\n", "terraform  unusable (%s): its version says neither Terraform nor OpenTofu: \"Something v2\"", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := filepath.Join(dir, tc.name)
			script := fmt.Sprintf("#!/bin/sh\nprintf '%%s' '%s'\n", strings.ReplaceAll(tc.prints, "'", ""))
			if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cmd := versionCommand()
			cmd.SetOut(&out)
			cmd.SetArgs([]string{"--terraform", bin})
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if d := cmp.Diff(fmt.Sprintf(tc.want, bin), lines[len(lines)-1]); d != "" {
				t.Errorf("version's binary line (-want +got):\n%s", d)
			}
			if tc.wantJSON == nil {
				return
			}
			out.Reset()
			cmd = versionCommand()
			cmd.SetOut(&out)
			cmd.SetArgs([]string{"--terraform", bin, "-o", "json"})
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			var got map[string]string
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			delete(got, "terraplane")
			delete(got, "go")
			delete(got, "platform")
			want := map[string]string{}
			for k, v := range tc.wantJSON {
				want[k] = fmt.Sprintf(v, bin)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("version -o json (-want +got):\n%s", d)
			}
		})
	}
}
