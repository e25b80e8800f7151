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

	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/image"
)

// options are the command's flags.
type options struct {
	version, chart, layout, out, registry, helm string
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "the release's version (git describe); the image's tag")
	flag.StringVar(&o.chart, "chart", "charts/terraplane", "the chart to package")
	flag.StringVar(&o.layout, "layout", "bin/release/image/oci", "the OCI layout of the image index (make image)")
	flag.StringVar(&o.out, "out", "bin/release", "where the packaged chart goes")
	flag.StringVar(&o.registry, "registry", "", "an OCI registry, host[:port]/path, to push the image and the chart to")
	flag.StringVar(&o.helm, "helm", filepath.Join(devenv.BinDir(), "helm"), "the helm binary")
	flag.Parse()
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
	if o.registry == "" {
		return nil
	}
	return push(o, chart)
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
// loopback, as the image is), so that the image and the chart have repositories of their own.
func push(o options, chart string) error {
	idx, err := image.IndexFromLayout(o.layout)
	if err != nil {
		return err
	}
	ref := strings.TrimSuffix(o.registry, "/") + "/terraplane:" + o.version
	if err := image.PushIndex(idx, ref); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("pushed image %s@%s\n", ref, digest)
	charts := strings.TrimSuffix(o.registry, "/") + "/charts"
	args := []string{"push", chart, "oci://" + charts}
	if PlainHTTP(o.registry) {
		args = append(args, "--plain-http")
	}
	if err := runHelm(o.helm, args...); err != nil {
		return err
	}
	fmt.Printf("pushed chart oci://%s/terraplane --version %s\n", charts, ChartVersion(o.version))
	return nil
}

func runHelm(helm string, args ...string) error {
	cmd := exec.Command(helm, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("helm %s: %w", args[0], err)
	}
	return nil
}
