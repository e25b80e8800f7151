// Command release packages the chart at the version `make release` builds, and with a
// registry pushes the image index and the chart there (`make release REGISTRY=...`):
//
//	go run ./hack/release -version V -layout bin/release/image/oci -out bin/release [-registry host:port/path]
//
// The chart's version is V as SemVer (v0.2.0-3-gabcdef0 gives 0.2.0-3-gabcdef0, a commit
// alone 0.0.0-g<commit>), its appVersion V itself, which is the image's tag; with a
// registry, its image.repository defaults to REGISTRY/terraplane, and it is pushed to
// REGISTRY/charts/terraplane.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/signature"

	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/image"
	"terraplane.io/terraplane/internal/supplychain"
)

// options are the command's flags.
type options struct {
	version, chart, layout, out, registry, helm string
	// key is the signing key's PEM file; builder, source, revision, command and started
	// go into the provenance.
	key, builder, source, revision, command string
	started                                 time.Time
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "the release's version (git describe); the image's tag")
	flag.StringVar(&o.chart, "chart", "charts/terraplane", "the chart to package")
	flag.StringVar(&o.layout, "layout", "bin/release/image/oci", "the OCI layout of the image index (make image)")
	flag.StringVar(&o.out, "out", "bin/release", "where the packaged chart goes")
	flag.StringVar(&o.registry, "registry", "", "an OCI registry, host[:port]/path, to push the image and the chart to")
	flag.StringVar(&o.helm, "helm", filepath.Join(devenv.BinDir(), "helm"), "the helm binary")
	flag.StringVar(&o.key, "key", "", "PEM private key to sign with (PKCS#8, SEC 1 or cosign's encrypted format, its password in COSIGN_PASSWORD); none: an ephemeral key")
	flag.StringVar(&o.builder, "builder", "local:make-release", "the provenance's builder id (a URI naming what ran the build)")
	flag.StringVar(&o.source, "source", "", "the repository's address, for the provenance")
	flag.StringVar(&o.revision, "revision", "", "the commit built, for the provenance")
	flag.StringVar(&o.command, "command", "make release", "the build command, for the provenance")
	started := flag.String("started", "", "when the build started (RFC 3339); default now")
	flag.Parse()
	o.started = time.Now()
	if *started != "" {
		t, err := time.Parse(time.RFC3339, *started)
		if err != nil {
			fmt.Fprintln(os.Stderr, "release: -started:", err)
			os.Exit(2)
		}
		o.started = t
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.version == "" {
		return fmt.Errorf("-version is required (make release sets it from git describe)")
	}
	chart, err := packageChart(o)
	if err != nil {
		return err
	}
	fmt.Printf("chart %s (version %s, appVersion %s)\n", chart, ChartVersion(o.version), o.version)
	idx, err := image.IndexFromLayout(o.layout)
	if err != nil {
		return err
	}
	if o.registry == "" {
		return unsigned(o, idx)
	}
	sv, err := signer(o)
	if err != nil {
		return err
	}
	index, chartRef, err := push(o, idx, chart)
	if err != nil {
		return err
	}
	return signPushed(o, sv, idx, index, chartRef)
}

// signPushed describes the pushed index's images, signs the index, the images and the
// chart, and attaches the SBOMs and the provenance.
func signPushed(o options, sv signature.SignerVerifier, idx v1.ImageIndex, index, chartRef name.Digest) error {
	images, err := describe(o, idx, index.Context().Name(), o.started)
	if err != nil {
		return err
	}
	subjects := []supplychain.Subject{subject(index), subject(chartRef)}
	for _, d := range images {
		subjects = append(subjects, subject(index.Context().Digest(d.digest.String())))
	}
	prov, err := provenance(o, images, subjects)
	if err != nil {
		return err
	}
	return signAll(o, sv, index, chartRef, images, prov)
}

// unsigned writes the SBOMs and the provenance of a release that is not pushed: signatures
// are of manifests in a registry, and are made when the release is pushed.
func unsigned(o options, idx v1.ImageIndex) error {
	images, err := describe(o, idx, "terraplane", o.started)
	if err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	subjects := []supplychain.Subject{supplychain.SubjectOf("terraplane", digest)}
	for _, d := range images {
		subjects = append(subjects, supplychain.SubjectOf("terraplane", d.digest))
	}
	if _, err := provenance(o, images, subjects); err != nil {
		return err
	}
	fmt.Println("NOTE: not signed: the index, images and chart are signed when pushed (make release REGISTRY=...)")
	return nil
}

func subject(ref name.Digest) supplychain.Subject {
	h, _ := v1.NewHash(ref.DigestStr())
	return supplychain.SubjectOf(ref.Context().Name(), h)
}

// packageChart copies the chart, points its image at the registry (if any), and packages
// it with helm at the release's version into o.out.
func packageChart(o options) (string, error) {
	stage, err := os.MkdirTemp("", "terraplane-chart-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	dir := filepath.Join(stage, filepath.Base(o.chart))
	if err := os.CopyFS(dir, os.DirFS(o.chart)); err != nil {
		return "", fmt.Errorf("copy the chart: %w", err)
	}
	if o.registry != "" {
		values := filepath.Join(dir, "values.yaml")
		raw, err := os.ReadFile(values)
		if err != nil {
			return "", err
		}
		raw, err = SetImageRepository(raw, strings.TrimSuffix(o.registry, "/")+"/terraplane")
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(values, raw, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return "", err
	}
	version := ChartVersion(o.version)
	if err := runHelm(o.helm, "package", dir, "--version", version, "--app-version", o.version, "--destination", o.out); err != nil {
		return "", err
	}
	return filepath.Join(o.out, "terraplane-"+version+".tgz"), nil
}

// push pushes the image index to REGISTRY/terraplane:VERSION and the chart to
// oci://REGISTRY/charts, as REGISTRY/charts/terraplane (over plain HTTP for a registry on
// loopback, as the image is), so that the image and the chart have repositories of their
// own; it returns both by digest.
func push(o options, idx v1.ImageIndex, chart string) (index, chartRef name.Digest, err error) {
	ref := strings.TrimSuffix(o.registry, "/") + "/terraplane:" + o.version
	if err := image.PushIndex(idx, ref); err != nil {
		return index, chartRef, err
	}
	digest, err := idx.Digest()
	if err != nil {
		return index, chartRef, err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return index, chartRef, err
	}
	index = tag.Context().Digest(digest.String())
	fmt.Printf("pushed image %s@%s\n", ref, digest)
	charts := strings.TrimSuffix(o.registry, "/") + "/charts"
	args := []string{"push", chart, "oci://" + charts}
	if PlainHTTP(o.registry) {
		args = append(args, "--plain-http")
	}
	if err := runHelm(o.helm, args...); err != nil {
		return index, chartRef, err
	}
	fmt.Printf("pushed chart oci://%s/terraplane --version %s\n", charts, ChartVersion(o.version))
	chartRef, err = pushedDigest(charts + "/terraplane:" + strings.ReplaceAll(ChartVersion(o.version), "+", "_"))
	return index, chartRef, err
}

// pushedDigest is the manifest ref is a tag of, by digest (helm tags a chart with its
// version, + written _).
func pushedDigest(ref string) (name.Digest, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return name.Digest{}, fmt.Errorf("chart reference %q: %w", ref, err)
	}
	desc, err := remote.Head(tag, remote.WithAuthFromKeychain(authn.DefaultKeychain))
	if err != nil {
		return name.Digest{}, fmt.Errorf("the pushed chart %s: %w", ref, err)
	}
	return tag.Context().Digest(desc.Digest.String()), nil
}

func runHelm(helm string, args ...string) error {
	cmd := exec.Command(helm, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("helm %s: %w", args[0], err)
	}
	return nil
}
