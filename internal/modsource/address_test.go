package modsource

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"terraplane.io/terraplane/internal/resource"
)

// TestParseGit: a git URL or scp-like address comes down to scheme, lower-case host
// without the scheme's default port, and a path without trailing slashes; anything a
// server could read otherwise than the allow-list does is refused.
func TestParseGit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want address
		err  string
	}{
		{in: "https://Git.Example.com/Org/Repo.git", want: address{"https", "git.example.com", "/Org/Repo.git"}},
		{in: "https://git.example.com:443/x/", want: address{"https", "git.example.com", "/x"}},
		{in: "https://git.example.com:8443/x", want: address{"https", "git.example.com:8443", "/x"}},
		{in: "http://git.example.com:80/x", want: address{"http", "git.example.com", "/x"}},
		{in: "http://git.example.com:443/x", want: address{"http", "git.example.com:443", "/x"}},
		{in: "ssh://git@git.example.com:22/x.git", want: address{"ssh", "git.example.com", "/x.git"}},
		{in: "ssh://GIT.example.com:2222/x", want: address{"ssh", "git.example.com:2222", "/x"}},
		{in: "git@GitHub.com:acme/x.git", want: address{"ssh", "github.com", "/acme/x.git"}},
		{in: "git@github.com:/acme/x.git", want: address{"ssh", "github.com", "/acme/x.git"}},
		{in: "file:///srv/repos/x", want: address{"file", "", "/srv/repos/x"}},
		{in: "file://localhost/srv/x", want: address{"file", "", "/srv/x"}},
		{in: "https://git.example.com", want: address{"https", "git.example.com", ""}},
		{in: "https://git.example.com/", want: address{"https", "git.example.com", ""}},
		{in: "git.example.com/x", err: "neither a URL nor an scp-like address"},
		{in: "ftp://git.example.com/x", err: "scheme ftp:// is not one of"},
		{in: "https://git.example.com/x?ref=main", err: "escapes, queries and fragments"},
		{in: "https://git.example.com/x?", err: "escapes, queries and fragments"},
		{in: "https://git.example.com/x#main", err: "escapes, queries and fragments"},
		{in: "https://git.example.com/a%2Fb", err: "escapes, queries and fragments"},
		{in: "https:///x", err: "no host"},
		{in: "https://git.example.com/a/../b", err: ". or .. segments"},
		{in: "https://git.example.com/a/./b", err: ". or .. segments"},
		{in: "git@git.example.com:a/../b", err: ". or .. segments"},
		{in: `git@git.example.com:a\b`, err: "backslash"},
		{in: "https://git.example.com:port/x", err: "invalid port"},
	} {
		got, err := parseGit(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseGit(%q) = %+v, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseGit(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

// TestParseEntry: an allow-list entry is a git address, or an OCI repository with or
// without oci://, docker.io standing for Docker Hub's registry.
func TestParseEntry(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want address
		err  bool
	}{
		{in: "ghcr.io/Acme", want: address{"oci", "ghcr.io", "/Acme"}},
		{in: "oci://GHCR.io/acme/", want: address{"oci", "ghcr.io", "/acme"}},
		{in: "docker.io/library", want: address{"oci", "index.docker.io", "/library"}},
		{in: "registry.example.com:5000", want: address{"oci", "registry.example.com:5000", ""}},
		{in: "https://git.example.com/org", want: address{"https", "git.example.com", "/org"}},
		{in: "git@github.com:acme", want: address{"ssh", "github.com", "/acme"}},
		{in: "", err: true},
		{in: "oci:///acme", err: true},
		{in: "ghcr.io/a/../b", err: true},
		{in: "ftp://files.example.com/x", err: true},
	} {
		got, err := parseEntry(tc.in)
		if (err != nil) != tc.err || !tc.err && got != tc.want {
			t.Errorf("parseEntry(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestParseSource: an OCI reference is reduced to its registry and repository, with
// Docker Hub's defaults; tags and digests play no part.
func TestParseSource(t *testing.T) {
	digest := "@sha256:" + strings.Repeat("b", 64)
	for _, tc := range []struct {
		in   string
		want address
		err  bool
	}{
		{in: "oci://ghcr.io/acme/db:v1", want: address{"oci", "ghcr.io", "/acme/db"}},
		{in: "oci://ghcr.io/acme/db" + digest, want: address{"oci", "ghcr.io", "/acme/db"}},
		{in: "oci://ubuntu", want: address{"oci", "index.docker.io", "/library/ubuntu"}},
		{in: "oci://docker.io/acme/db", want: address{"oci", "index.docker.io", "/acme/db"}},
		{in: "oci://registry.example.com:5000/m/db:1", want: address{"oci", "registry.example.com:5000", "/m/db"}},
		{in: "oci://Not A Reference", err: true},
		{in: "https://git.example.com/x", want: address{"https", "git.example.com", "/x"}},
	} {
		got, err := parseSource(tc.in)
		if (err != nil) != tc.err || !tc.err && got != tc.want {
			t.Errorf("parseSource(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestValidateAllowList: every entry is checked, and an error names the one refused.
func TestValidateAllowList(t *testing.T) {
	for _, tc := range []struct {
		entries []string
		err     string
	}{
		{nil, ""},
		{[]string{"https://git.example.com/org", "git@github.com:acme", "ghcr.io/acme", "oci://r.example.com:5000/m", "file:///srv"}, ""},
		{[]string{"https://git.example.com/org", "ftp://x/y"}, `entry "ftp://x/y"`},
		{[]string{"https://git.example.com/org?x=1"}, `entry "https://git.example.com/org?x=1"`},
		{[]string{"oci://"}, `entry "oci://": no registry`},
	} {
		err := ValidateAllowList(tc.entries)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ValidateAllowList(%q) = %v, want %q", tc.entries, err, tc.err)
		}
	}
}

// TestAdmit: the user error that refuses a source, if any: insecure git schemes need the
// flag, the allow-list applies to git and OCI alike, and a git URL that does not parse
// is an invalid source.
func TestAdmit(t *testing.T) {
	list := []string{"https://git.example.com/org", "ghcr.io/acme", "file:///srv/repos"}
	for _, tc := range []struct {
		name         string
		l            *Loader
		kind, source string
		reason       string
		inMessage    []string
	}{
		{name: "https, no list", kind: "git", source: "https://anywhere.example/x.git"},
		{name: "http without the flag", kind: "git", source: "http://git.example.com/org/x.git",
			reason: ReasonNotAllowed, inMessage: []string{"uses http://", "--allow-insecure-module-sources"}},
		{name: "file without the flag", l: &Loader{AllowedSources: list}, kind: "git", source: "file:///srv/repos/x",
			reason: ReasonNotAllowed, inMessage: []string{"uses file://"}},
		{name: "http with the flag", l: &Loader{AllowInsecure: true}, kind: "git", source: "http://git.example.com/x.git"},
		{name: "file with the flag, listed", l: &Loader{AllowInsecure: true, AllowedSources: list}, kind: "git", source: "file:///srv/repos/x"},
		{name: "file with the flag, not listed", l: &Loader{AllowInsecure: true, AllowedSources: list}, kind: "git", source: "file:///etc",
			reason: ReasonNotAllowed, inMessage: []string{"git source file:///etc is not allowed", strings.Join(list, ", ")}},
		{name: "git listed", l: &Loader{AllowedSources: list}, kind: "git", source: "https://git.example.com/org/x.git"},
		{name: "git not listed", l: &Loader{AllowedSources: list}, kind: "git", source: "https://git.example.com/other/x.git",
			reason: ReasonNotAllowed, inMessage: []string{"--module-source-allow"}},
		{name: "git that does not parse", kind: "git", source: "https://git.example.com/x?ref=v1",
			reason: ReasonInvalidSource, inMessage: []string{"git source https://git.example.com/x?ref=v1"}},
		{name: "OCI listed", l: &Loader{AllowedSources: list}, kind: "OCI", source: "oci://ghcr.io/acme/db:v1"},
		{name: "OCI not listed", l: &Loader{AllowedSources: list}, kind: "OCI", source: "oci://ghcr.io/evil/db:v1",
			reason: ReasonNotAllowed, inMessage: []string{"OCI source"}},
	} {
		if tc.l == nil {
			tc.l = &Loader{}
		}
		err := tc.l.admit(tc.kind, tc.source, tc.source)
		if tc.reason == "" {
			if err != nil {
				t.Errorf("%s: %v, want it admitted", tc.name, err)
			}
			continue
		}
		u, ok := resource.AsUserError(err)
		if !ok || u.Reason != tc.reason {
			t.Errorf("%s: %v, want a %s user error", tc.name, err, tc.reason)
			continue
		}
		for _, w := range tc.inMessage {
			if !strings.Contains(u.Message, w) {
				t.Errorf("%s: message %q lacks %q", tc.name, u.Message, w)
			}
		}
	}
}

// TestAllowedSkipsBrokenEntries: an entry that does not parse admits nothing, and does
// not stop another from admitting; a source that does not parse is never admitted.
func TestAllowedSkipsBrokenEntries(t *testing.T) {
	l := &Loader{AllowedSources: []string{"ftp://x/y", "https://git.example.com/org"}}
	got := map[string]bool{}
	for _, s := range []string{"https://git.example.com/org/x", "ftp://x/y/z", "https://git.example.com/org/x#frag"} {
		got[s] = l.allowed(s)
	}
	want := map[string]bool{"https://git.example.com/org/x": true, "ftp://x/y/z": false, "https://git.example.com/org/x#frag": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("allowed (-want +got):\n%s", diff)
	}
}

// TestCleanPath: trailing slashes go; . and .. segments and backslashes are refused.
func TestCleanPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{"/", "", false},
		{"/a/b/", "/a/b", false},
		{"/a//b", "/a//b", false},
		{"/a/.b/..c", "/a/.b/..c", false},
		{"/a/./b", "", true},
		{"/a/..", "", true},
		{`/a\b`, "", true},
	} {
		got, err := cleanPath(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("cleanPath(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}
