package install

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"debug/buildinfo"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"
	"github.com/sigstore/sigstore/pkg/signature"

	"terraplane.io/terraplane/internal/supplychain"
)

// testBuilder is the provenance's builder id in the release tests.
const testBuilder = "test://terraplane-release-test"

// TestReleaseSigned runs `make release REGISTRY=... COSIGN_KEY=...` against a registry on
// loopback, as docs/install.md walks it, and checks what a security team checks, reading
// it all back from the registry: the index, each image and the chart verify with the
// public key (and not with another key); each image has its SPDX SBOM attached, listing
// the Go modules of the terraplane binary that was built, OpenTofu and the Go toolchain;
// and the provenance names the commit, the builder, the command and the materials. A
// second run of hack/release without a key signs with an ephemeral key, whose public key
// it writes.
func TestReleaseSigned(t *testing.T) {
	g := NewWithT(t)
	tool(t, "helm", "make tools-test")
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	repo := strings.TrimPrefix(reg.URL, "http://") + "/platform"
	out := t.TempDir()
	key, pub := signingKey(t, out)

	By(t, "make release REGISTRY="+repo+" COSIGN_KEY="+key)
	makeRelease := exec.Command("make", "-C", "../..", "release", "REGISTRY="+repo, "RELEASE_OUT="+out, "COSIGN_KEY="+key,
		"BUILDER="+testBuilder)
	output, err := makeRelease.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "make release:\n%s", output)
	t.Logf("make release:\n%s", lastLines(string(output), 12))
	version := releasedVersion(g, output)
	written, err := os.ReadFile(filepath.Join(out, "cosign.pub"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(written)).To(Equal(string(pub)), "bin/release/cosign.pub is COSIGN_KEY's public key")
	charts, _ := filepath.Glob(filepath.Join(out, "terraplane-*.tgz"))
	g.Expect(charts).To(HaveLen(1), "the packaged chart")
	chartVersion := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(charts[0]), "terraplane-"), ".tgz")
	verifyRelease(t, g, repo, version, chartVersion, out, pub)
	cosignVerifies(t, g, repo, version, chartVersion, pub)

	By(t, "hack/release without a key: an ephemeral key, its public key written and printed")
	repo2 := repo + "-ephemeral"
	out2 := t.TempDir()
	run := exec.Command("go", "run", "./hack/release", "-version", version, "-layout", filepath.Join(out, "image", "oci"),
		"-out", out2, "-registry", repo2, "-helm", tool(t, "helm", "make tools-test"))
	run.Dir = "../.."
	output, err = run.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "hack/release:\n%s", output)
	g.Expect(string(output)).To(ContainSubstring("NOTE: no COSIGN_KEY: this release is signed with an ephemeral key"))
	ephemeral, err := os.ReadFile(filepath.Join(out2, "cosign.pub"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(output)).To(ContainSubstring(string(ephemeral)))
	v, err := supplychain.LoadVerifier(ephemeral)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = supplychain.VerifySignatures(v, digestOf(g, repo2+"/terraplane:"+version))
	g.Expect(err).NotTo(HaveOccurred(), "the ephemeral key verifies its release")
	_, err = supplychain.VerifySignatures(v, digestOf(g, repo+"/terraplane:"+version))
	g.Expect(errors.Is(err, supplychain.ErrUnverified)).To(BeTrue(), "the ephemeral key does not verify the first release: %v", err)
}

// verifyRelease checks the release make release pushed to repo, with the public key pub:
// signatures of the index, of each image and of the chart; each image's SBOM, compared
// with the build info of the terraplane binary built into out/image; the SPDX and SLSA
// attestations. Another key verifies none of them.
func verifyRelease(t *testing.T, g Gomega, repo, version, chartVersion, out string, pub []byte) {
	By(t, "the signatures, SBOMs and provenance of "+repo+"/terraplane:"+version+", read back with the public key")
	v, err := supplychain.LoadVerifier(pub)
	g.Expect(err).NotTo(HaveOccurred())
	other := otherVerifier(t)
	index := digestOf(g, repo+"/terraplane:"+version)
	chart := digestOf(g, repo+"/charts/terraplane:"+strings.ReplaceAll(chartVersion, "+", "_"))
	for _, ref := range []name.Digest{index, chart} {
		claims, err := supplychain.VerifySignatures(v, ref)
		g.Expect(err).NotTo(HaveOccurred(), "signature of %s", ref)
		g.Expect(claims[0].Critical.Identity.DockerReference).To(Equal(ref.Context().Name()))
		_, err = supplychain.VerifySignatures(other, ref)
		g.Expect(errors.Is(err, supplychain.ErrUnverified)).To(BeTrue(), "another key verifies %s: %v", ref, err)
		checkProvenance(g, v, ref, version)
	}
	idx, err := remote.Index(index)
	g.Expect(err).NotTo(HaveOccurred())
	m, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Manifests).NotTo(BeEmpty())
	for _, d := range m.Manifests {
		ref := index.Context().Digest(d.Digest.String())
		_, err := supplychain.VerifySignatures(v, ref)
		g.Expect(err).NotTo(HaveOccurred(), "signature of the %s image", d.Platform)
		sbom, err := supplychain.ReadSBOM(ref)
		g.Expect(err).NotTo(HaveOccurred(), "the SBOM of the %s image", d.Platform)
		bi, err := buildinfo.ReadFile(filepath.Join(out, "image", d.Platform.OS+"_"+d.Platform.Architecture, "terraplane"))
		g.Expect(err).NotTo(HaveOccurred(), "the terraplane binary built for %s", d.Platform)
		checkSBOM(g, sbom, bi, version, d.Platform.Architecture)
		statements := checkProvenance(g, v, ref, version)
		var attested supplychain.Document
		for _, st := range statements {
			if st.PredicateType == supplychain.SPDXPredicateType {
				g.Expect(json.Unmarshal(st.Predicate, &attested)).To(Succeed())
			}
		}
		g.Expect(attested).To(Equal(sbom), "the attested SBOM of %s is the attached one", d.Platform)
	}
}

// checkSBOM checks an image's SBOM against the build info of its terraplane binary.
func checkSBOM(g Gomega, doc supplychain.Document, bi *buildinfo.BuildInfo, version, arch string) {
	g.Expect(doc.SPDXVersion).To(Equal("SPDX-2.3"))
	versions := map[string]string{}
	licences := map[string]string{}
	for _, p := range doc.Packages {
		versions[p.Name], licences[p.Name] = p.VersionInfo, p.LicenseDeclared
	}
	g.Expect(bi.Deps).NotTo(BeEmpty())
	for _, dep := range bi.Deps {
		if dep.Replace != nil {
			dep = dep.Replace
		}
		g.Expect(versions).To(HaveKeyWithValue(dep.Path, dep.Version), "the SBOM lists the module %s", dep.Path)
	}
	g.Expect(versions).To(HaveKeyWithValue("terraplane", version))
	g.Expect(versions).To(HaveKeyWithValue("stdlib", strings.TrimPrefix(bi.GoVersion, "go")))
	g.Expect(versions).To(HaveKeyWithValue("tofu", MatchRegexp(`^v1\.\d+\.\d+$`)), "OpenTofu's version, on %s", arch)
	g.Expect(licences).To(HaveKeyWithValue("tofu", "MPL-2.0"))
	g.Expect(licences).To(HaveKeyWithValue("terraplane", "Apache-2.0"))
}

// checkProvenance verifies the attestations of ref and checks its SLSA provenance: the
// commit, the builder, the command and the materials; it returns the statements.
func checkProvenance(g Gomega, v signature.Verifier, ref name.Digest, version string) []supplychain.Statement {
	statements, err := supplychain.VerifyAttestations(v, ref)
	g.Expect(err).NotTo(HaveOccurred(), "attestations of %s", ref)
	var prov *supplychain.Provenance
	for _, st := range statements {
		if st.PredicateType == supplychain.SLSAProvenanceType {
			prov = &supplychain.Provenance{}
			g.Expect(json.Unmarshal(st.Predicate, prov)).To(Succeed())
		}
	}
	g.Expect(prov).NotTo(BeNil(), "%s has SLSA provenance", ref)
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(prov.RunDetails.Builder.ID).To(Equal(testBuilder))
	g.Expect(prov.BuildDefinition.ExternalParameters).To(HaveKeyWithValue("command", HavePrefix("make release REGISTRY=")))
	g.Expect(prov.BuildDefinition.ExternalParameters).To(HaveKeyWithValue("version", version))
	var materials []string
	for _, d := range prov.BuildDefinition.ResolvedDependencies {
		materials = append(materials, d.Name+" "+d.Digest["gitCommit"])
	}
	g.Expect(materials).To(ContainElements("source "+strings.TrimSpace(string(head)), "go ", "sigs.k8s.io/controller-runtime "))
	return statements
}

// signingKey writes a PKCS#8 ECDSA P-256 key to dir (what docs/install.md says to make
// with openssl) and returns its path and its PEM public key.
func signingKey(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "release.key")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return path, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
}

func otherVerifier(t *testing.T) signature.Verifier {
	t.Helper()
	sv, err := supplychain.GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	return sv
}

// digestOf is ref (a tag) by the digest the registry serves for it.
func digestOf(g Gomega, ref string) name.Digest {
	tag, err := name.NewTag(ref)
	g.Expect(err).NotTo(HaveOccurred())
	desc, err := remote.Head(tag)
	g.Expect(err).NotTo(HaveOccurred(), "%s in the registry", ref)
	return tag.Context().Digest(desc.Digest.String())
}

// releasedVersion is the version make release tagged its image with, from the line that
// says what it pushed: git describe's when it ran, which a commit made since would move.
func releasedVersion(g Gomega, output []byte) string {
	m := regexp.MustCompile(`(?m)^pushed image \S+/terraplane:(\S+)@sha256:`).FindSubmatch(output)
	g.Expect(m).NotTo(BeNil(), "make release names the image it pushed:\n%s", output)
	return string(m[1])
}
