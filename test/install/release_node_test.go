package install

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/image"
)

// TestReleaseFromRegistry runs `make release REGISTRY=... COSIGN_KEY=...` against a
// registry on loopback, as docs/install.md walks it: the image index holds linux/amd64 and
// linux/arm64 images, each labelled with git describe's version and bundling OpenTofu
// built for its architecture; the index, images and chart verify with the public key, and
// the SBOMs and provenance read back (verifyRelease); `helm install oci://...` then installs the pushed chart into the node,
// whose containerd pulls the index from the registry, and the controller becomes Ready.
func TestReleaseFromRegistry(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	n := node(t)
	helm := tool(t, "helm", "make tools-test")
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	repo := strings.TrimPrefix(reg.URL, "http://") + "/platform"

	out := t.TempDir()
	key, pub := signingKey(t, out)
	By(t, "make release REGISTRY="+repo+" COSIGN_KEY="+key)
	makeRelease := exec.Command("make", "-C", "../..", "release", "REGISTRY="+repo, "RELEASE_OUT="+out, "COSIGN_KEY="+key, "BUILDER="+testBuilder)
	output, err := makeRelease.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "make release:\n%s", output)
	t.Logf("make release:\n%s", lastLines(string(output), 12))
	version := releasedVersion(g, output)
	g.Expect(filepath.Join(out, "image", "oci", "index.json")).To(BeAnExistingFile())
	g.Expect(filepath.Join(out, "image", "terraplane.tar")).To(BeAnExistingFile())
	charts, _ := filepath.Glob(filepath.Join(out, "terraplane-*.tgz"))
	g.Expect(charts).To(HaveLen(1), "the packaged chart")
	chartVersion := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(charts[0]), "terraplane-"), ".tgz")

	By(t, "the pushed index: linux/amd64 and linux/arm64, each labelled and built for its architecture")
	ref, err := name.ParseReference(repo + "/terraplane:" + version)
	g.Expect(err).NotTo(HaveOccurred())
	idx, err := remote.Index(ref)
	g.Expect(err).NotTo(HaveOccurred())
	manifest, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	machines := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	var platforms []string
	for _, d := range manifest.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		g.Expect(err).NotTo(HaveOccurred())
		cfg, err := img.ConfigFile()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cfg.Architecture).To(Equal(d.Platform.Architecture), "the config says its architecture")
		g.Expect(cfg.Config.Labels).To(HaveKeyWithValue("org.opencontainers.image.version", version))
		g.Expect(cfg.Config.Labels).To(HaveKeyWithValue(image.LabelLicenses, "Apache-2.0 AND MPL-2.0"))
		for _, bin := range []string{"usr/local/bin/terraplane", "usr/local/bin/tofu"} {
			g.Expect(elfMachine(g, img, bin)).To(Equal(machines[cfg.Architecture]), "%s of %s", bin, d.Platform)
		}
	}
	g.Expect(platforms).To(ConsistOf("linux/amd64", "linux/arm64"))
	verifyRelease(t, g, repo, version, chartVersion, out, pub)

	By(t, "helm install oci://"+repo+"/charts/terraplane --version "+chartVersion+": the node pulls the image from the registry")
	if _, err := exec.Command(helm, "--kubeconfig", n.Kubeconfig(), "status", "terraplane", "-n", adminNS).Output(); err == nil {
		n.helm(g, helm, "uninstall", "terraplane", "-n", adminNS, "--wait") // TestHelmOnNode's release
	}
	g.Expect(client.IgnoreAlreadyExists(n.Client.Create(ctx, restrictedNS(adminNS)))).To(Succeed())
	defer n.dumpPods(t, adminNS)
	n.helm(g, helm, "install", "terraplane", "oci://"+repo+"/charts/terraplane", "--version", chartVersion, "--plain-http",
		"-n", adminNS, "--wait", "--timeout", "5m")
	pod := n.controllerPod(g, ctx)
	digest, err := idx.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pod.Spec.Containers[0].Image).To(Equal(repo + "/terraplane:" + version))
	g.Expect(pod.Status.ContainerStatuses[0].ImageID).To(HaveSuffix(digest.String()), "the index, pulled from the registry")

	By(t, "terraplane version in the pulled image: git describe's version, and the image's tofu")
	const ns = "release-version"
	g.Expect(n.Client.Create(ctx, restrictedNS(ns))).To(Succeed())
	versionPod := restrictedPod(ns, "version", "", "version")
	versionPod.Spec.Containers[0].Image, versionPod.Spec.Containers[0].ImagePullPolicy = repo+"/terraplane:"+version, corev1.PullIfNotPresent
	g.Expect(n.Client.Create(ctx, versionPod)).To(Succeed())
	phase, printed := n.podDone(g, ctx, ns, "version")
	g.Expect(phase).To(Equal(corev1.PodSucceeded), printed)
	g.Expect(printed).To(HavePrefix("terraplane " + version + " go1."))
	g.Expect(printed).To(MatchRegexp(`(?m)^opentofu +1\.\d+\.\d+ \(/usr/local/bin/tofu\)$`))
	n.helm(g, helm, "uninstall", "terraplane", "-n", adminNS, "--wait")
}

// elfMachine is the ELF machine of the file at path in img's file system.
func elfMachine(g Gomega, img v1.Image, path string) elf.Machine {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		g.Expect(err).NotTo(HaveOccurred())
		if hdr.Name != path {
			continue
		}
		raw, err := io.ReadAll(tr)
		g.Expect(err).NotTo(HaveOccurred())
		f, err := elf.NewFile(bytes.NewReader(raw))
		g.Expect(err).NotTo(HaveOccurred(), path)
		return f.Machine
	}
	g.Expect(path).To(BeEmpty(), "the image holds no %s", path)
	return elf.EM_NONE
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
