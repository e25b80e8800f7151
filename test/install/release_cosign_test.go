package install

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"

	"terraplane.io/terraplane/internal/supplychain"
)

// cosignVerifies runs the cosign commands docs/install.md gives a user, against the
// release make release pushed to repo, with the public key pub: the index and the chart
// verify, the index's provenance and each image's signature and SBOM attestation
// verify, the attached SBOM downloads; another key verifies nothing.
func cosignVerifies(t *testing.T, g Gomega, repo, version, chartVersion string, pub []byte) {
	By(t, "the cosign commands docs/install.md gives, with the public key")
	cosign := tool(t, "cosign", "make tools-test")
	dir := t.TempDir()
	key, other := filepath.Join(dir, "cosign.pub"), filepath.Join(dir, "other.pub")
	g.Expect(os.WriteFile(key, pub, 0o644)).To(Succeed())
	otherPub, err := supplychain.PublicKeyPEM(otherVerifier(t))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(other, otherPub, 0o644)).To(Succeed())
	run := func(args ...string) (string, error) {
		cmd := exec.Command(cosign, append(args, "--allow-http-registry")...)              // the registry is on loopback
		cmd.Env = append(os.Environ(), "TUF_ROOT="+filepath.Join(dir, "tuf"), "HOME="+dir) // cosign keeps its trust-root cache here
		out, err := cmd.Output()
		return string(out), err
	}
	image := repo + "/terraplane:" + version
	chart := repo + "/charts/terraplane:" + strings.ReplaceAll(chartVersion, "+", "_")
	for _, ref := range []string{image, chart} {
		out, err := run("verify", "--key", key, "--insecure-ignore-tlog", ref)
		g.Expect(err).NotTo(HaveOccurred(), "cosign verify %s: %s", ref, out)
		g.Expect(out).To(ContainSubstring(`"docker-manifest-digest"`))
		_, err = run("verify", "--key", other, "--insecure-ignore-tlog", ref)
		g.Expect(err).To(HaveOccurred(), "another key verifies %s", ref)
	}
	out, err := run("verify-attestation", "--key", key, "--insecure-ignore-tlog", "--type", "slsaprovenance1", image)
	g.Expect(err).NotTo(HaveOccurred(), "cosign verify-attestation --type slsaprovenance1: %s", out)
	out, err = run("download", "sbom", "--platform", "linux/amd64", image)
	g.Expect(err).NotTo(HaveOccurred(), "cosign download sbom: %s", out)
	var sbom supplychain.Document
	g.Expect(json.Unmarshal([]byte(out), &sbom)).To(Succeed(), "the downloaded SBOM is SPDX JSON")
	g.Expect(sbom.SPDXVersion).To(Equal("SPDX-2.3"))

	index := digestOf(g, image)
	idx, err := remote.Index(index)
	g.Expect(err).NotTo(HaveOccurred())
	m, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	for _, d := range m.Manifests {
		ref := index.Context().Digest(d.Digest.String()).String()
		out, err := run("verify", "--key", key, "--insecure-ignore-tlog", ref)
		g.Expect(err).NotTo(HaveOccurred(), "cosign verify of the %s image: %s", d.Platform, out)
		out, err = run("verify-attestation", "--key", key, "--insecure-ignore-tlog", "--type", "spdxjson", ref)
		g.Expect(err).NotTo(HaveOccurred(), "the signed SBOM of the %s image: %s", d.Platform, out)
	}
}
