package image

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// twoPlatforms builds stand-in images for linux/amd64 and linux/arm64, as make image does.
func twoPlatforms(t *testing.T) []v1.Image {
	t.Helper()
	dir := fixture(t, map[string]string{"amd64/tofu": "tofu-amd64", "arm64/tofu": "tofu-arm64",
		"amd64/terraplane": "tp-amd64", "arm64/terraplane": "tp-arm64", "ca.crt": "pem"})
	var imgs []v1.Image
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := Build(Options{Terraplane: filepath.Join(dir, arch, "terraplane"), Terraform: filepath.Join(dir, arch, "tofu"),
			CACerts: filepath.Join(dir, "ca.crt"), Scratch: t.TempDir(), Platform: v1.Platform{OS: "linux", Architecture: arch}, Version: "v0.2.0"})
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	return imgs
}

// TestIndex: one entry per image with its platform, each image's config saying its
// architecture, the version as an annotation; written as a layout it reads back whole,
// and read as a single image it is refused.
func TestIndex(t *testing.T) {
	idx, err := Index(twoPlatforms(t)...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIImageIndex || m.Annotations["org.opencontainers.image.version"] != "v0.2.0" {
		t.Errorf("index media type %s, annotations %v", m.MediaType, m.Annotations)
	}
	var platforms []string
	for _, d := range m.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Architecture != d.Platform.Architecture {
			t.Errorf("the %s entry's config says %s", d.Platform, cfg.Architecture)
		}
		if got := imageFiles(t, img); got["/usr/local/bin/tofu"] == 0 {
			t.Errorf("the %s image has no tofu: %v", d.Platform, got)
		}
	}
	if d := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); d != "" {
		t.Errorf("platforms (-want +got):\n%s", d)
	}

	dir := filepath.Join(t.TempDir(), "oci")
	if err := WriteIndexLayout(idx, dir, "terraplane:v0.2.0"); err != nil {
		t.Fatal(err)
	}
	back, err := IndexFromLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	if got, _ := back.Digest(); got != want {
		t.Errorf("layout index digest %s, built %s", got, want)
	}
	if _, err := FromLayout(dir); err == nil || !strings.Contains(err.Error(), "not an image") {
		t.Errorf("FromLayout of an index: %v", err)
	}
	if _, err := Index(); err == nil {
		t.Error("an index of no images")
	}
}

// TestArchive: the tarball holds the OCI layout (the same digests, named for containerd)
// and a Docker manifest.json naming the chosen platform's config and layers, all present.
func TestArchive(t *testing.T) {
	imgs := twoPlatforms(t)
	idx, err := Index(imgs...)
	if err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(t.TempDir(), "single")
	if err := WriteLayout(imgs[0], one, "terraplane:dev"); err != nil {
		t.Fatal(err)
	}
	multi := filepath.Join(t.TempDir(), "multi")
	if err := WriteIndexLayout(idx, multi, "127.0.0.1:5000/platform/terraplane:v0.2.0"); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		layout, ref, containerdName string
		platform                    v1.Platform
		want                        v1.Image
	}{
		"one image":            {one, "terraplane:dev", "docker.io/library/terraplane:dev", v1.Platform{}, imgs[0]},
		"the index, amd64":     {multi, "127.0.0.1:5000/platform/terraplane:v0.2.0", "127.0.0.1:5000/platform/terraplane:v0.2.0", v1.Platform{}, imgs[0]},
		"the index, for arm64": {multi, "127.0.0.1:5000/platform/terraplane:v0.2.0", "127.0.0.1:5000/platform/terraplane:v0.2.0", v1.Platform{OS: "linux", Architecture: "arm64"}, imgs[1]},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "image.tar")
			if err := WriteArchive(tc.layout, path, tc.ref, tc.platform); err != nil {
				t.Fatal(err)
			}
			dir, manifest := untar(t, path)
			_, desc, err := single(dir)
			if err != nil {
				t.Fatal(err)
			}
			if desc.Annotations["io.containerd.image.name"] != tc.containerdName || desc.Annotations["org.opencontainers.image.ref.name"] != tc.ref {
				t.Errorf("annotations %v", desc.Annotations)
			}
			cfg, _ := tc.want.ConfigName()
			want := dockerEntry{Config: "blobs/sha256/" + cfg.Hex, RepoTags: []string{tc.ref}}
			layers, _ := tc.want.Layers()
			for _, l := range layers {
				d, _ := l.Digest()
				want.Layers = append(want.Layers, "blobs/sha256/"+d.Hex)
			}
			if d := cmp.Diff([]dockerEntry{want}, manifest); d != "" {
				t.Errorf("manifest.json (-want +got):\n%s", d)
			}
			for _, p := range append([]string{want.Config}, want.Layers...) {
				if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
					t.Errorf("manifest.json names %s: %v", p, err)
				}
			}
		})
	}
	if err := WriteArchive(multi, filepath.Join(t.TempDir(), "x.tar"), "terraplane:x", v1.Platform{OS: "linux", Architecture: "s390x"}); err == nil {
		t.Error("an archive for a platform the index lacks")
	}
}
