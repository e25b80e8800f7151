// Command image builds and pushes Terraplane's container image without a container
// engine (see internal/image). `make image` and `make image-push` run it:
//
//	go run ./hack/image build -platforms linux/amd64,linux/arm64 -terraplane bin/image/linux_{arch}/terraplane -terraform tofu \
//	    -providers aws,random -version V -out DIR -tag terraplane:dev
//	go run ./hack/image push -layout DIR/oci -to REGISTRY/terraplane:TAG
//	go run ./hack/image pause -binary PAUSE -out FILE.tar -tag terraplane.local/pause:1
package main

import (
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/image"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|push|pause [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = build(os.Args[2:])
	case "push":
		err = push(os.Args[2:])
	case "pause":
		err = pause(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (build, push or pause)", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func build(args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	o := image.Options{}
	var terraplane, terraform, providers, platforms, out, tag string
	fs.StringVar(&terraplane, "terraplane", "bin/image/linux_{arch}/terraplane", "statically linked terraplane binary of each platform ({arch} is its architecture)")
	fs.StringVar(&terraform, "terraform", "tofu", "tofu or terraform: a path, or a name looked up in the tool cache (linux_ARCH/ for other architectures), then on PATH")
	fs.StringVar(&platforms, "platforms", "linux/amd64", "platforms of the image index, comma-separated")
	fs.StringVar(&o.CACerts, "ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "CA certificate bundle")
	fs.StringVar(&o.ProviderMirror, "mirror", devenv.PluginMirror(), "filesystem mirror the providers come from")
	fs.StringVar(&providers, "providers", "", "provider types to bake into the image, e.g. aws,random (default: none)")
	fs.StringVar(&o.Version, "version", "", "the org.opencontainers.image.version label (git describe)")
	fs.StringVar(&o.Revision, "revision", "", "the org.opencontainers.image.revision label (the commit)")
	fs.StringVar(&o.Source, "source", "", "the org.opencontainers.image.source label (the repository's address)")
	fs.StringVar(&out, "out", "bin/image", "output directory: oci/ (OCI layout) and terraplane.tar")
	fs.StringVar(&tag, "tag", "terraplane:dev", "image reference written into the tarball")
	_ = fs.Parse(args)
	o.Providers = splitList(providers)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	scratch, err := os.MkdirTemp(out, ".layers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	var imgs []v1.Image
	for _, pl := range splitList(platforms) {
		img, err := buildFor(o, pl, terraplane, terraform, scratch)
		if err != nil {
			return err
		}
		imgs = append(imgs, img)
	}
	idx, err := image.Index(imgs...)
	if err != nil {
		return err
	}
	return writeOut(idx, imgs, out, tag)
}

// buildFor builds the image of platform (os/arch) with its binaries.
func buildFor(o image.Options, platform, terraplane, terraform, scratch string) (v1.Image, error) {
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		return nil, fmt.Errorf("platform %q: %w", platform, err)
	}
	o.Platform = *p
	o.Terraplane = strings.ReplaceAll(terraplane, "{arch}", p.Architecture)
	if o.Terraform, err = findBinary(terraform, p.Architecture); err != nil {
		return nil, err
	}
	for _, bin := range []string{o.Terraplane, o.Terraform} {
		if err := checkArch(bin, p.Architecture); err != nil {
			return nil, err
		}
	}
	if o.Scratch, err = os.MkdirTemp(scratch, p.Architecture+"-"); err != nil {
		return nil, err
	}
	return image.Build(o)
}

// writeOut writes the index as an OCI layout and a tarball in out and says what it built.
func writeOut(idx v1.ImageIndex, imgs []v1.Image, out, tag string) error {
	layout := filepath.Join(out, "oci")
	if err := image.WriteIndexLayout(idx, layout, tag); err != nil {
		return err
	}
	if err := image.WriteArchive(layout, filepath.Join(out, "terraplane.tar"), tag, v1.Platform{}); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("built %s (index %s)\n", tag, digest)
	for _, img := range imgs {
		if err := describe(img); err != nil {
			return err
		}
	}
	fmt.Printf("  OCI layout %s, tarball %s (ctr import, podman load: every platform; docker load: linux/amd64)\n",
		layout, filepath.Join(out, "terraplane.tar"))
	return nil
}

// describe prints an image's platform, size and what it bundles.
func describe(img v1.Image) error {
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	compressed, uncompressed, err := sizes(img)
	if err != nil {
		return err
	}
	l := cfg.Config.Labels
	fmt.Printf("  %s/%s: %.1f MB compressed, %.1f MB unpacked; %s, providers [%s]; licences %s\n", cfg.OS, cfg.Architecture,
		mb(compressed), mb(uncompressed), l[image.LabelTerraform], l["io.terraplane.providers"], l[image.LabelLicenses])
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func push(args []string) error {
	fs := flag.NewFlagSet("push", flag.ExitOnError)
	dir := fs.String("layout", "bin/image/oci", "OCI layout that `image build` wrote")
	to := fs.String("to", "", "registry reference, e.g. registry.example.com/platform/terraplane:v0.1.0")
	_ = fs.Parse(args)
	if *to == "" {
		return fmt.Errorf("push: -to is required (make image-push REGISTRY=host/path)")
	}
	idx, err := image.IndexFromLayout(*dir)
	if err != nil {
		return err
	}
	if err := image.PushIndex(idx, *to); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("pushed %s@%s\n", *to, digest)
	return nil
}

// pause writes the sandbox image of make cluster's node (hack/pause) as a tarball.
func pause(args []string) error {
	fs := flag.NewFlagSet("pause", flag.ExitOnError)
	bin := fs.String("binary", "", "statically linked pause binary (go build ./hack/pause)")
	out := fs.String("out", "", "image tarball to write")
	tag := fs.String("tag", "terraplane.local/pause:1", "image reference written into the tarball")
	_ = fs.Parse(args)
	if *bin == "" || *out == "" {
		return fmt.Errorf("pause: -binary and -out are required")
	}
	scratch, err := os.MkdirTemp(filepath.Dir(*out), ".pause-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	img, err := image.BuildPause(*bin, scratch)
	if err != nil {
		return err
	}
	if err := image.WriteTarball(img, *out, *tag); err != nil {
		return err
	}
	fmt.Printf("built %s into %s\n", *tag, *out)
	return nil
}

// findBinary resolves a path, or a name in the tool cache's bin/ (bin/linux_ARCH/ for an
// architecture other than amd64) and then, for amd64, on PATH.
func findBinary(nameOrPath, arch string) (string, error) {
	if strings.ContainsRune(nameOrPath, '/') {
		return strings.ReplaceAll(nameOrPath, "{arch}", arch), nil
	}
	dir := devenv.BinDir()
	if arch != "amd64" {
		dir = filepath.Join(dir, "linux_"+arch)
	}
	if p := filepath.Join(dir, nameOrPath); isFile(p) {
		return p, nil
	}
	if arch != "amd64" {
		return "", fmt.Errorf("no %s for linux/%s in %s (hack/install-tools.sh tofu-%s builds OpenTofu for it; a terraform from this machine is linux/amd64 only: build with PLATFORMS=linux/amd64)",
			nameOrPath, arch, dir, arch)
	}
	p, err := exec.LookPath(nameOrPath)
	if err != nil {
		return "", fmt.Errorf("%s is neither in %s nor on PATH", nameOrPath, dir)
	}
	return p, nil
}

// elfMachines are the ELF machines of the architectures an image may be built for.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkArch fails unless bin is a Linux executable for arch.
func checkArch(bin, arch string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Errorf("%s is not a Linux executable: %w", bin, err)
	}
	defer f.Close()
	if want, ok := elfMachines[arch]; !ok || f.Machine != want {
		return fmt.Errorf("%s is built for %s, not for linux/%s", bin, f.Machine, arch)
	}
	return nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func sizes(img v1.Image) (compressed, uncompressed int64, err error) {
	layers, err := img.Layers()
	if err != nil {
		return 0, 0, err
	}
	for _, l := range layers {
		c, err := l.Size()
		if err != nil {
			return 0, 0, err
		}
		compressed += c
		rc, err := l.Uncompressed()
		if err != nil {
			return 0, 0, err
		}
		n, err := countBytes(rc)
		if err != nil {
			return 0, 0, err
		}
		uncompressed += n
	}
	return compressed, uncompressed, nil
}

func mb(n int64) float64 { return float64(n) / 1e6 }

// countBytes reads rc to the end, closes it and returns how many bytes it held.
func countBytes(rc io.ReadCloser) (int64, error) {
	defer rc.Close()
	return io.Copy(io.Discard, rc)
}
