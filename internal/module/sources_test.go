package module

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRegistryHost: tofu binaries, by name or path, mean OpenTofu's registry; anything
// else means Terraform's.
func TestRegistryHost(t *testing.T) {
	for binary, want := range map[string]string{
		"":                         DefaultRegistry,
		"terraform":                DefaultRegistry,
		"/usr/bin/terraform":       DefaultRegistry,
		"tofu":                     "registry.opentofu.org",
		"/opt/tofu/bin/tofu-1.9.0": "registry.opentofu.org",
		"/opt/tofu/bin/terraform":  DefaultRegistry,
	} {
		if got := RegistryHost(binary); got != want {
			t.Errorf("RegistryHost(%q) = %q, want %q", binary, got, want)
		}
	}
}

// TestAnyMeets: without constraints any version will do, but there must be one; with
// them, one parseable version must meet them; a constraint that does not parse is an error.
func TestAnyMeets(t *testing.T) {
	for _, tc := range []struct {
		versions    []string
		constraints string
		want        bool
		err         bool
	}{
		{nil, "", false, false},
		{[]string{"1.0.0"}, "", true, false},
		{[]string{"5.100.0"}, "~> 5.0", true, false},
		{[]string{"4.9.0", "6.0.0"}, "~> 5.0", false, false},
		{[]string{"1.4.0", "2.1.0"}, ">= 1.2, < 2.0", true, false},
		{[]string{"not-a-version", "2.1.0"}, ">= 2.0", true, false},
		{[]string{"not-a-version"}, ">= 0.0.1", false, false},
		{[]string{"1.0.0"}, "about five", false, true},
	} {
		got, err := anyMeets(tc.versions, tc.constraints)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("anyMeets(%v, %q) = %v, %v; want %v, error %v", tc.versions, tc.constraints, got, err, tc.want, tc.err)
		}
	}
}

// TestMirrorVersions: an unpacked mirror lists version directories, a packed one the
// versions of the zips of that provider type; other files are ignored.
func TestMirrorVersions(t *testing.T) {
	mirror := t.TempDir()
	src := "registry.terraform.io/hashicorp/random"
	for _, p := range []string{
		"3.6.0/linux_amd64/terraform-provider-random_v3.6.0_x5",
		"terraform-provider-random_3.7.1_linux_amd64.zip",
		"terraform-provider-random_3.7.2_linux_arm64.zip",
		"terraform-provider-randomx_9.9.9_linux_amd64.zip",
		"terraform-provider-random_4.0.0_linux_amd64.tar.gz",
		"terraform-provider-random.zip",
		"README",
	} {
		full := filepath.Join(mirror, src, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(mirror, src, "3.6.0"), filepath.Join(mirror, src, "3.6.1")); err != nil {
		t.Fatal(err)
	}
	got := mirrorVersions(mirror, src)
	if diff := cmp.Diff([]string{"3.6.0", "3.6.1", "3.7.1", "3.7.2"}, got); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	if got := mirrorVersions(mirror, "registry.terraform.io/hashicorp/absent"); got != nil {
		t.Errorf("a provider the mirror lacks: %v", got)
	}
}

// TestNetworkMirrorAnswers: a provider the mirror does not know (404) has no versions;
// another status or an index that does not decode is an error naming the mirror.
func TestNetworkMirrorAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/h/ns/ok/index.json":
			_, _ = w.Write([]byte(`{"versions": {"2.0.0": {}, "1.0.0": {}}}`))
		case "/h/ns/broken/index.json":
			_, _ = w.Write([]byte(`{"versions": [`))
		case "/h/ns/down/index.json":
			http.Error(w, "no", http.StatusBadGateway)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	s := ProviderSources{NetworkMirror: srv.URL}
	for _, tc := range []struct {
		source string
		want   []string
		err    string
	}{
		{"h/ns/ok", []string{"1.0.0", "2.0.0"}, ""},
		{"h/ns/absent", []string{}, ""},
		{"h/ns/broken", nil, "network mirror: " + srv.URL + "/h/ns/broken/index.json"},
		{"h/ns/down", nil, "502 Bad Gateway"},
	} {
		got, err := s.versions(context.Background(), tc.source)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one with %q", tc.source, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.source, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: versions (-want +got):\n%s", tc.source, diff)
		}
	}
}

// TestUnavailableSentences: what a missing provider's sentence says, with and without
// constraints, and an unparseable constraint named as such.
func TestUnavailableSentences(t *testing.T) {
	mirror := t.TempDir()
	if err := os.MkdirAll(filepath.Join(mirror, DefaultRegistry, "hashicorp/aws/5.1.0"), 0o755); err != nil {
		t.Fatal(err)
	}
	aws := DefaultRegistry + "/hashicorp/aws"
	for _, tc := range []struct {
		req  ProviderRequirement
		want []string
	}{
		{ProviderRequirement{Source: aws, Constraints: "~> 5.0"}, nil},
		{ProviderRequirement{Source: aws}, nil},
		{ProviderRequirement{Source: aws, Constraints: "< 5.0"}, []string{"provider " + aws + " < 5.0 is not in the provider mirror (it holds 5.1.0)"}},
		{ProviderRequirement{Source: DefaultRegistry + "/x/y"}, []string{"provider " + DefaultRegistry + "/x/y is not in the provider mirror"}},
	} {
		got := ProviderSources{Mirror: mirror}.Unavailable(context.Background(), []ProviderRequirement{tc.req})
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", tc.req, diff)
		}
	}
	bad := ProviderSources{Mirror: mirror}.Unavailable(context.Background(), []ProviderRequirement{{Source: aws, Constraints: "five"}})
	if len(bad) != 1 || !strings.HasPrefix(bad[0], "provider "+aws+`: version constraint "five": `) {
		t.Errorf("an unparseable constraint: %v", bad)
	}
}

// TestRequiredProvidersLeavesTheBuiltinOut: terraform's built-in provider is never a
// requirement, whether declared or implied.
func TestRequiredProvidersLeavesTheBuiltinOut(t *testing.T) {
	got, err := RequiredProviders(map[string][]byte{"main.tf": []byte(`terraform {
  required_providers {
    terraform = { source = "terraform.io/builtin/terraform" }
    Null      = { source = "HashiCorp/Null" }
  }
}
resource "terraform_data" "d" {}
`)})
	if err != nil {
		t.Fatal(err)
	}
	want := []ProviderRequirement{{Name: "Null", Source: DefaultRegistry + "/hashicorp/null"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RequiredProviders (-want +got):\n%s", diff)
	}
}
