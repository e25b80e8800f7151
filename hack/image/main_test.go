package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFindBinary: a name is looked up in the tool cache's bin/ for amd64 and in
// bin/linux_ARCH/ for another architecture, which never falls back to PATH (a binary
// there is this machine's, amd64); a path is taken as given, {arch} filled in.
func TestFindBinary(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("TERRAPLANE_CACHE", cache)
	for _, rel := range []string{"bin/tofu", "bin/linux_arm64/tofu"} {
		p := filepath.Join(cache, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("bin"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	onPath := t.TempDir()
	if err := os.WriteFile(filepath.Join(onPath, "terraform"), []byte("bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", onPath)
	cases := map[string]struct{ name, arch, want, err string }{
		"cached, amd64":            {"tofu", "amd64", filepath.Join(cache, "bin/tofu"), ""},
		"cached, arm64":            {"tofu", "arm64", filepath.Join(cache, "bin/linux_arm64/tofu"), ""},
		"on PATH, amd64":           {"terraform", "amd64", filepath.Join(onPath, "terraform"), ""},
		"on PATH is not for arm64": {"terraform", "arm64", "", "a terraform from this machine is linux/amd64 only"},
		"a path with {arch}":       {"/opt/tofu-{arch}/tofu", "arm64", "/opt/tofu-arm64/tofu", ""},
		"nowhere":                  {"nothing", "amd64", "", "neither in"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := findBinary(tc.name, tc.arch)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("path (-want +got):\n%s", d)
			}
		})
	}
}

// TestCheckArch: the test binary itself is an amd64 (or arm64) Linux executable, and not
// one for the other architecture; a file that is no executable is refused.
func TestCheckArch(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	own, other := "amd64", "arm64"
	if err := checkArch(self, own); err != nil {
		own, other = other, own
	}
	if err := checkArch(self, own); err != nil {
		t.Fatalf("the test binary is neither amd64 nor arm64: %v", err)
	}
	if err := checkArch(self, other); err == nil || !strings.Contains(err.Error(), "not for linux/"+other) {
		t.Errorf("checkArch(%s) = %v, want a refusal", other, err)
	}
	text := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkArch(text, own); err == nil || !strings.Contains(err.Error(), "not a Linux executable") {
		t.Errorf("a script: %v", err)
	}
}
