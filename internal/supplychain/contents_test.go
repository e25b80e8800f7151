package supplychain

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"terraplane.io/terraplane/internal/image"
)

// tarEntry is a file of a test image's layer: a regular file, or a symlink to link.
type tarEntry struct{ name, content, link string }

// imageOf is an image for platform with labels and one layer holding entries.
func imageOf(t *testing.T, platform string, labels map[string]string, entries ...tarEntry) v1.Image {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Mode: 0o755, Size: int64(len(e.content)), Typeflag: tar.TypeReg}
		if e.link != "" {
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, e.link, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(empty.Image, static.NewLayer(buf.Bytes(), types.OCIUncompressedLayer))
	if err != nil {
		t.Fatal(err)
	}
	os, arch, _ := strings.Cut(platform, "/")
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{OS: os, Architecture: arch, Config: v1.Config{Labels: labels}})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// TestReadContentsPicks: of an image's files, only the terraform binary its label names
// and the provider packages at the mirror's depth count, symlinks never, the providers
// sorted by path; an image whose terraplane is not a Go binary is refused, naming the
// platform.
func TestReadContentsPicks(t *testing.T) {
	const provider = image.Mirror + "/registry.opentofu.org/hashicorp/random/3.9.0/linux_arm64/terraform-provider-random"
	img := imageOf(t, "linux/arm64", map[string]string{image.LabelTerraform: "tofu", image.LabelLicenses: "Apache-2.0 AND MPL-2.0"},
		tarEntry{name: strings.TrimPrefix(image.BinDir, "/") + "/tofu", content: "tofu"},
		tarEntry{name: image.BinDir + "/terraform", content: "not the labelled one"},
		tarEntry{name: image.BinDir + "/terraplane", content: "not a Go binary"},
		tarEntry{name: provider, content: "random"},
		tarEntry{name: image.Mirror + "/registry.opentofu.org/hashicorp/aws/5.0.0/linux_arm64/terraform-provider-aws", content: "aws"},
		tarEntry{name: image.Mirror + "/registry.opentofu.org/hashicorp/null/3.2.0/linux_arm64/terraform-provider-null", link: "../x"},
		tarEntry{name: image.Mirror + "/registry.opentofu.org/hashicorp/index.json", content: "{}"},
		tarEntry{name: image.Mirror + "/registry.opentofu.org/hashicorp/random/3.9.0/linux_arm64/extra/deep", content: "deep"},
	)
	c, err := ReadContents(img, "v1.2.3")
	if err == nil || !strings.Contains(err.Error(), "linux/arm64") || !strings.Contains(err.Error(), image.BinDir+"/terraplane") {
		t.Errorf("ReadContents of an image without a Go terraplane = %v, want an error naming the platform and the binary", err)
	}
	if c.Terraform.Name != "tofu" || c.Terraform.SHA256 != sum("tofu") || c.Terraform.Path != image.BinDir+"/tofu" || c.Terraform.Version != "" {
		t.Errorf("terraform %+v, want tofu by its checksum and no version (no build info)", c.Terraform)
	}
	if c.Platform != "linux/arm64" || c.Licences != "Apache-2.0 AND MPL-2.0" {
		t.Errorf("platform %q, licences %q", c.Platform, c.Licences)
	}
	var got []string
	for _, p := range c.Providers {
		got = append(got, p.Source+" "+p.Namespace+" "+p.Type+" "+p.Version+" "+p.SHA256)
	}
	want := []string{
		"registry.opentofu.org/hashicorp/aws hashicorp aws 5.0.0 " + sum("aws"),
		"registry.opentofu.org/hashicorp/random hashicorp random 3.9.0 " + sum("random"),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("providers (-want +got):\n%s", d)
	}
	unlabelled, _ := ReadContents(imageOf(t, "linux/amd64", nil, tarEntry{name: image.BinDir + "/tofu", content: "tofu"}), "v1")
	if unlabelled.Terraform.Name != "" {
		t.Errorf("an image with no terraform label: terraform %+v, want none", unlabelled.Terraform)
	}
}

// TestIDSetUnique: SPDX IDs lose the characters SPDX does not allow, and a repeated one
// gets a number, so that every package of a document has its own.
func TestIDSetUnique(t *testing.T) {
	ids := idSet{}
	var got []string
	for _, id := range []string{
		"SPDXRef-Package-go-github.com/a/b", "SPDXRef-Package-go-github.com/a/b", "SPDXRef-Package-go-github.com/a/b",
		"Package-go-github.com/a_b", "SPDXRef-Package-go-github.com/a/b-2", "SPDXRef-x@y z",
	} {
		got = append(got, ids.unique(id))
	}
	want := []string{
		"SPDXRef-Package-go-github.com-a-b", "SPDXRef-Package-go-github.com-a-b-2", "SPDXRef-Package-go-github.com-a-b-3",
		"SPDXRef-Package-go-github.com-a-b-4", "SPDXRef-Package-go-github.com-a-b-2-2", "SPDXRef-x-y-z",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("IDs (-want +got):\n%s", d)
	}
}

// TestPackages: the SBOM's packages state what is known and NOASSERTION otherwise: the
// licence of a terraform binary of another name and of a provider outside HashiCorp's
// namespace, the version of a binary that does not say; the image's purl escapes its
// digest and names its architecture; a terraform binary's purl names its module.
func TestPackages(t *testing.T) {
	tf := terraformPackage(Binary{Name: "terraform-custom", Path: "/usr/local/bin/terraform-custom", SHA256: "aa"})
	if tf.LicenseDeclared != noAssertion || tf.VersionInfo != noAssertion || tf.ExternalRefs != nil {
		t.Errorf("a terraform binary of unknown name and version: %+v", tf)
	}
	tofu := terraformPackage(Binary{Name: "tofu", Version: "v1.10.10", Build: &debug.BuildInfo{Path: "github.com/opentofu/opentofu/cmd/tofu",
		Main: debug.Module{Path: "terraplane.io/hack/tools/tofu", Version: "(devel)"},
		Deps: []*debug.Module{{Path: "github.com/opentofu/opentofu", Version: "v1.10.10"}}}})
	if tofu.LicenseDeclared != "MPL-2.0" || len(tofu.ExternalRefs) != 1 || tofu.ExternalRefs[0].ReferenceLocator != "pkg:golang/github.com/opentofu/opentofu@v1.10.10" {
		t.Errorf("tofu built from a tools module: %+v", tofu)
	}
	for _, tc := range []struct{ namespace, licence string }{{"hashicorp", "MPL-2.0"}, {"cloudflare", noAssertion}} {
		p := providerPackage(Provider{Source: "registry.opentofu.org/" + tc.namespace + "/x", Namespace: tc.namespace, Type: "x", Version: "1.0.0"})
		if p.LicenseDeclared != tc.licence || p.LicenseConcluded != tc.licence {
			t.Errorf("provider of %s: licence %q/%q, want %q", tc.namespace, p.LicenseDeclared, p.LicenseConcluded, tc.licence)
		}
	}
	img := imagePackage(Contents{Platform: "linux/arm64", Terraplane: Binary{Version: "v1"}},
		ImageRef{Repository: "registry.example.com/t", Digest: testDigest})
	wantPURL := "pkg:oci/terraplane@sha256%3A" + strings.TrimPrefix(testDigest, "sha256:") + "?arch=arm64&repository_url=registry.example.com/t"
	if img.ExternalRefs[0].ReferenceLocator != wantPURL || img.LicenseDeclared != noAssertion || img.Checksums[0].ChecksumValue != strings.TrimPrefix(testDigest, "sha256:") {
		t.Errorf("image package %+v", img)
	}
}
