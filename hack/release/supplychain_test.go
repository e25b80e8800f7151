package main

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"terraplane.io/terraplane/internal/image"
	"terraplane.io/terraplane/internal/supplychain"
)

// TestSignPushed pushes an index of one real image (a Go binary of this module as
// terraplane, a stand-in tofu) and a stand-in chart to a registry on loopback, runs the
// release's signing step, and reads back what a user verifies: the signatures of the
// index, the image and the chart with the public key written to cosign.pub, the image's
// SBOM, and the SPDX and SLSA attestations; the SBOM and provenance files are written.
func TestSignPushed(t *testing.T) {
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	repo := strings.TrimPrefix(reg.URL, "http://") + "/platform"
	idx := testIndex(t)
	must(t, image.PushIndex(idx, repo+"/terraplane:v0.1.0"))
	chart, err := random.Image(128, 1)
	must(t, err)
	chartTag, err := name.NewTag(repo + "/charts/terraplane:0.1.0")
	must(t, err)
	must(t, remote.Write(chartTag, chart))
	index, err := pushedDigest(repo + "/terraplane:v0.1.0")
	must(t, err)
	chartRef, err := pushedDigest(chartTag.String())
	must(t, err)

	o := options{version: "v0.1.0", out: t.TempDir(), registry: repo, builder: "test://builder", revision: "abc123",
		source: "https://example.com/terraplane.git", command: "make release REGISTRY=" + repo, started: time.Now()}
	sv, err := signer(o)
	must(t, err)
	must(t, signPushed(o, sv, idx, index, chartRef))

	pub, err := os.ReadFile(filepath.Join(o.out, "cosign.pub"))
	must(t, err)
	v, err := supplychain.LoadVerifier(pub)
	must(t, err)
	m, err := idx.IndexManifest()
	must(t, err)
	imageRef := index.Context().Digest(m.Manifests[0].Digest.String())
	for _, ref := range []name.Digest{index, imageRef, chartRef} {
		if _, err := supplychain.VerifySignatures(v, ref); err != nil {
			t.Errorf("signature of %s: %v", ref, err)
		}
	}
	types := map[name.Digest][]string{}
	for _, ref := range []name.Digest{index, imageRef, chartRef} {
		statements, err := supplychain.VerifyAttestations(v, ref)
		if err != nil {
			t.Fatalf("attestations of %s: %v", ref, err)
		}
		for _, st := range statements {
			types[ref] = append(types[ref], st.PredicateType)
		}
	}
	want := map[name.Digest][]string{
		index:    {supplychain.SLSAProvenanceType},
		imageRef: {supplychain.SLSAProvenanceType, supplychain.SPDXPredicateType},
		chartRef: {supplychain.SLSAProvenanceType},
	}
	for ref, w := range want {
		if strings.Join(types[ref], ",") != strings.Join(w, ",") {
			t.Errorf("attestations of %s: %v, want %v", ref, types[ref], w)
		}
	}
	sbom, err := supplychain.ReadSBOM(imageRef)
	must(t, err)
	if sbom.Name != "terraplane-v0.1.0-linux-amd64" || len(sbom.Packages) < 5 {
		t.Errorf("SBOM %q with %d packages", sbom.Name, len(sbom.Packages))
	}
	for _, f := range []string{"sbom/terraplane-linux-amd64.spdx.json", "provenance.json"} {
		if _, err := os.Stat(filepath.Join(o.out, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestSignerKey checks that the key in -key is the one whose public key cosign.pub holds,
// and that a missing key file fails rather than signing with another key.
func TestSignerKey(t *testing.T) {
	out := t.TempDir()
	sv, err := supplychain.GenerateSigner()
	must(t, err)
	pub, err := supplychain.PublicKeyPEM(sv)
	must(t, err)
	if _, err := signer(options{out: out, key: filepath.Join(out, "missing.key")}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing key: %v", err)
	}
	ephemeral, err := signer(options{out: out})
	must(t, err)
	written, err := os.ReadFile(filepath.Join(out, "cosign.pub"))
	must(t, err)
	got, err := supplychain.PublicKeyPEM(ephemeral)
	must(t, err)
	if string(got) != string(written) || string(got) == string(pub) {
		t.Errorf("cosign.pub is not the ephemeral key's")
	}
}

// testIndex is an index of one linux/amd64 image whose terraplane is hack/registry, built
// here (a Go binary with modules in its build info).
func testIndex(t *testing.T) v1.ImageIndex {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "terraplane")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "terraplane.io/terraplane/hack/registry")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	must(t, os.MkdirAll(filepath.Join(dir, "tf"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "tf", "tofu"), []byte("tofu"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("pem"), 0o644))
	img, err := image.Build(image.Options{Terraplane: bin, Terraform: filepath.Join(dir, "tf", "tofu"), CACerts: filepath.Join(dir, "ca.crt"),
		Scratch: t.TempDir(), Version: "v0.1.0"})
	must(t, err)
	idx, err := image.Index(img)
	must(t, err)
	return idx
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
