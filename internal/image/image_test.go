package image

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestBuildLayout builds an image from small stand-in files and checks its file system,
// its configuration, and that the OCI layout and tarball read back to the same digest.
func TestBuildLayout(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mirror := filepath.Join(dir, "mirror")
	write("mirror/registry.terraform.io/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0_x5", "random")
	write("mirror/registry.opentofu.org/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0_x5", "random")
	scratch := filepath.Join(dir, "scratch")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := Build(Options{Terraplane: write("terraplane", "tp"), Terraform: write("bin/terraform", "tf"), CACerts: write("ca.crt", "pem"),
		ProviderMirror: mirror, Providers: []string{"random"}, Scratch: scratch})
	if err != nil {
		t.Fatal(err)
	}
	files := imageFiles(t, img)
	want := map[string]int64{
		"/etc/passwd": 0o644, "/etc/group": 0o644, "/etc/ssl/certs/ca-certificates.crt": 0o644,
		"/usr/local/bin/terraform": 0o755, "/usr/local/bin/terraplane": 0o755,
		"/opt/terraplane/providers/registry.terraform.io/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0_x5": 0o755,
	}
	if d := cmp.Diff(want, files); d != "" {
		t.Errorf("image files (-want +got):\n%s", d)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || cfg.Config.Entrypoint[0] != "/usr/local/bin/terraplane" {
		t.Errorf("config user %q entrypoint %v", cfg.Config.User, cfg.Config.Entrypoint)
	}
	if err := WriteLayout(img, filepath.Join(dir, "oci"), "terraplane:test"); err != nil {
		t.Fatal(err)
	}
	back, err := FromLayout(filepath.Join(dir, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := back.Digest()
	if d1 != d2 {
		t.Errorf("OCI layout digest %s, built %s", d2, d1)
	}
	if err := WriteTarball(img, filepath.Join(dir, "image.tar"), "terraplane:test"); err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag("terraplane:test")
	if err != nil {
		t.Fatal(err)
	}
	fromTar, err := tarball.ImageFromPath(filepath.Join(dir, "image.tar"), &tag)
	if err != nil {
		t.Fatal(err)
	}
	if d3, _ := fromTar.Digest(); d3 != d1 {
		t.Errorf("tarball digest %s, built %s", d3, d1)
	}
	if _, err := Build(Options{Terraplane: filepath.Join(dir, "terraplane"), Terraform: filepath.Join(dir, "bin/terraform"),
		CACerts: filepath.Join(dir, "ca.crt"), ProviderMirror: mirror, Providers: []string{"aws"}, Scratch: scratch}); err == nil {
		t.Error("a provider missing from the mirror built an image")
	}
}

// TestBuildForOpenTofu builds the image with tofu: the binary keeps its name, and the
// providers come from, and go to, the registry.opentofu.org tree tofu reads.
func TestBuildForOpenTofu(t *testing.T) {
	dir := t.TempDir()
	for rel, content := range map[string]string{
		"mirror/registry.opentofu.org/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0_x5": "random",
		"bin/tofu": "tofu", "terraplane": "tp", "ca.crt": "pem",
	} {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	img, err := Build(Options{Terraplane: filepath.Join(dir, "terraplane"), Terraform: filepath.Join(dir, "bin/tofu"), CACerts: filepath.Join(dir, "ca.crt"),
		ProviderMirror: filepath.Join(dir, "mirror"), Providers: []string{"random"}, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	files := imageFiles(t, img)
	for _, want := range []string{"/usr/local/bin/tofu", "/opt/terraplane/providers/registry.opentofu.org/hashicorp/random/3.9.0/linux_amd64/terraform-provider-random_v3.9.0_x5"} {
		if _, ok := files[want]; !ok {
			t.Errorf("the tofu image has no %s: %v", want, files)
		}
	}
	if _, ok := files["/usr/local/bin/terraform"]; ok {
		t.Error("the tofu image has a terraform binary")
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
