package image

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// fixture writes stand-in files under a temporary directory and returns its path.
func fixture(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, content := range files {
		writeAt(t, filepath.Join(dir, rel), content)
	}
	return dir
}

// TestBuild builds images from small stand-in files and checks, for terraform and for
// OpenTofu, the file system, the environment that names the binary the controller runs,
// the OCI media types and the labels (version, revision, licences).
func TestBuild(t *testing.T) {
	dir := fixture(t, map[string]string{
		"mirror/registry.terraform.io/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0_x5": "random",
		"mirror/registry.opentofu.org/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0_x5": "random",
		"terraform/terraform": "tf", "tofu/tofu": "tofu", "terraplane": "tp", "ca.crt": "pem",
	})
	base := map[string]int64{"/etc/passwd": 0o644, "/etc/group": 0o644, "/etc/ssl/certs/ca-certificates.crt": 0o644, "/usr/local/bin/terraplane": 0o755}
	with := func(extra map[string]int64) map[string]int64 {
		out := map[string]int64{}
		for _, m := range []map[string]int64{base, extra} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	cases := map[string]struct {
		binary    string
		providers []string
		files     map[string]int64
		licences  string
		busl      bool
	}{
		"terraform with the random provider": {"terraform/terraform", []string{"random"}, with(map[string]int64{"/usr/local/bin/terraform": 0o755,
			"/opt/terraplane/providers/registry.terraform.io/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0_x5": 0o755}),
			"Apache-2.0 AND BUSL-1.1 AND MPL-2.0", true},
		"tofu, no providers": {"tofu/tofu", nil, with(map[string]int64{"/usr/local/bin/tofu": 0o755}), "Apache-2.0 AND MPL-2.0", false},
		"tofu with the random provider from its own tree": {"tofu/tofu", []string{"random"}, with(map[string]int64{"/usr/local/bin/tofu": 0o755,
			"/opt/terraplane/providers/registry.opentofu.org/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0_x5": 0o755}),
			"Apache-2.0 AND MPL-2.0", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			img, err := Build(Options{Terraplane: filepath.Join(dir, "terraplane"), Terraform: filepath.Join(dir, tc.binary), CACerts: filepath.Join(dir, "ca.crt"),
				ProviderMirror: filepath.Join(dir, "mirror"), Providers: tc.providers, Scratch: t.TempDir(), Version: "v0.2.0-1-gabcdef0", Revision: "abcdef0123"})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.files, imageFiles(t, img)); d != "" {
				t.Errorf("image files (-want +got):\n%s", d)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			tfName := filepath.Base(tc.binary)
			if got := envOf(cfg.Config.Env, "TERRAPLANE_TERRAFORM"); got != tfName {
				t.Errorf("TERRAPLANE_TERRAFORM=%q, want %q (the binary the controller runs)", got, tfName)
			}
			if cfg.Config.User != "65532:65532" || cfg.Config.Entrypoint[0] != "/usr/local/bin/terraplane" || cfg.OS+"/"+cfg.Architecture != "linux/amd64" {
				t.Errorf("config user %q entrypoint %v platform %s/%s", cfg.Config.User, cfg.Config.Entrypoint, cfg.OS, cfg.Architecture)
			}
			labels := cfg.Config.Labels
			want := map[string]string{"org.opencontainers.image.version": "v0.2.0-1-gabcdef0", "org.opencontainers.image.revision": "abcdef0123",
				LabelLicenses: tc.licences, LabelTerraform: tfName}
			for k, v := range want {
				if labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, labels[k], v)
				}
			}
			if _, ok := labels["org.opencontainers.image.source"]; ok {
				t.Error("a source label without a source")
			}
			if got := strings.Contains(labels[LabelTerraformLicence], "Business Source License"); got != tc.busl {
				t.Errorf("licence notice %q: mentions the Business Source License %v, want %v", labels[LabelTerraformLicence], got, tc.busl)
			}
			checkOCITypes(t, img)
		})
	}
	if _, err := Build(Options{Terraplane: filepath.Join(dir, "terraplane"), Terraform: filepath.Join(dir, "terraplane"), CACerts: filepath.Join(dir, "ca.crt"),
		Scratch: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "name it terraform or tofu") {
		t.Errorf("a binary named neither terraform nor tofu: %v", err)
	}
	if _, err := Build(Options{Terraplane: filepath.Join(dir, "terraplane"), Terraform: filepath.Join(dir, "tofu/tofu"), CACerts: filepath.Join(dir, "ca.crt"),
		ProviderMirror: filepath.Join(dir, "mirror"), Providers: []string{"aws"}, Scratch: t.TempDir()}); err == nil {
		t.Error("a provider missing from the mirror built an image")
	}
}

// checkOCITypes fails unless img's manifest, config and layers have OCI media types.
func checkOCITypes(t *testing.T, img v1.Image) {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("manifest %s, config %s: want OCI", m.MediaType, m.Config.MediaType)
	}
	for _, l := range m.Layers {
		if l.MediaType != types.OCILayer {
			t.Errorf("layer %s has media type %s", l.Digest, l.MediaType)
		}
	}
}

func envOf(env []string, key string) string {
	for _, e := range env {
		if k, v, ok := strings.Cut(e, "="); ok && k == key {
			return v
		}
	}
	return ""
}

// TestProviderLicences: HashiCorp's providers are MPL-2.0; another's licence is not
// known, and is named as a LicenseRef rather than guessed.
func TestProviderLicences(t *testing.T) {
	at := func(rel string) entry { return entry{Path: Mirror + "/" + rel} }
	cases := map[string]struct {
		entries []entry
		want    []string
	}{
		"none": {nil, nil},
		"hashicorp's, once": {[]entry{at("registry.terraform.io/hashicorp/aws/5.0.0/linux_amd64/p"), at("registry.terraform.io/hashicorp/random/3.0.0/linux_amd64/p")},
			[]string{"MPL-2.0"}},
		"another namespace": {[]entry{at("registry.opentofu.org/acme/widgets/1.0.0/linux_arm64/p"), at("registry.opentofu.org/hashicorp/aws/5.0.0/linux_arm64/p")},
			[]string{"LicenseRef-terraform-provider-acme-widgets", "MPL-2.0"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, providerLicences(tc.entries)); d != "" {
				t.Errorf("licences (-want +got):\n%s", d)
			}
		})
	}
}

// imageFiles lists the regular files of an image's flattened file system and their modes.
func imageFiles(t *testing.T, img v1.Image) map[string]int64 {
	t.Helper()
	files := map[string]int64{}
	tr := tar.NewReader(mutate.Extract(img))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeReg {
			files["/"+hdr.Name] = hdr.Mode
		}
	}
}

// untar unpacks the tarball at path into a new directory and returns it and the Docker
// manifest.json it holds.
func untar(t *testing.T, path string) (string, []dockerEntry) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		writeAt(t, filepath.Join(dir, hdr.Name), string(raw))
	}
	var manifest []dockerEntry
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	return dir, manifest
}
