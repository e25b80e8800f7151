package main

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestChartVersion: a tag's SemVer is kept, without its v; anything else becomes a
// pre-release of 0.0.0 that Helm accepts, even a commit of digits alone.
func TestChartVersion(t *testing.T) {
	for version, want := range map[string]string{
		"v0.2.0":                  "0.2.0",
		"0.2.0":                   "0.2.0",
		"v0.2.0-3-gabcdef0":       "0.2.0-3-gabcdef0",
		"v0.2.0-3-gabcdef0-dirty": "0.2.0-3-gabcdef0-dirty",
		"v1.0.0-rc.1":             "1.0.0-rc.1",
		"a15e128":                 "0.0.0-ga15e128",
		"a15e128-dirty":           "0.0.0-ga15e128-dirty",
		"0123456":                 "0.0.0-g0123456",
		"devel":                   "0.0.0-gdevel",
		"v1.2":                    "0.0.0-gv1-2",
		"release/2024_01":         "0.0.0-grelease-2024-01",
	} {
		if got := ChartVersion(version); got != want {
			t.Errorf("ChartVersion(%q) = %q, want %q", version, got, want)
		}
	}
}

// TestSetImageRepository rewrites the chart's own values.yaml and nothing else in it,
// and refuses a values.yaml where it cannot find the line.
func TestSetImageRepository(t *testing.T) {
	raw, err := os.ReadFile("../../charts/terraplane/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := SetImageRepository(raw, "127.0.0.1:5000/platform/terraplane")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(raw), "\n  repository: terraplane\n", "\n  repository: 127.0.0.1:5000/platform/terraplane\n", 1)
	if want == string(raw) {
		t.Fatal("the chart's values.yaml has no `  repository: terraplane` line: fix this test")
	}
	if d := cmp.Diff(want, string(got)); d != "" {
		t.Errorf("values.yaml (-want +got):\n%s", d)
	}
	for _, bad := range []string{"replicas: 1\n", "stackManager:\n  repository: x\n"} {
		if _, err := SetImageRepository([]byte(bad), "r/terraplane"); err == nil {
			t.Errorf("values %q: want an error", bad)
		}
	}
}

// TestPlainHTTP: only registries on loopback are spoken to over plain HTTP.
func TestPlainHTTP(t *testing.T) {
	cases := map[string]bool{
		"127.0.0.1:5000/platform": true, "localhost:5000": true, "[::1]:5000/p": true, "127.0.0.2/x": true,
		"registry.example.com/platform": false, "10.254.0.1:5000/p": false, "ghcr.io": false, "localhost.example.com/p": false,
	}
	got := map[string]bool{}
	for r := range cases {
		got[r] = PlainHTTP(r)
	}
	if d := cmp.Diff(cases, got); d != "" {
		t.Errorf("plain HTTP (-want +got):\n%s", d)
	}
}
