package main

import (
	"runtime/debug"
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
