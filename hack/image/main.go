// Command image builds and pushes Terraplane's container image without a container
// engine (see internal/image). `make image` and `make image-push` run it:
//
//	go run ./hack/image build -terraplane BIN -terraform terraform -providers aws,random -out DIR -tag terraplane:dev
//	go run ./hack/image push -layout DIR/oci -to REGISTRY/terraplane:TAG
//	go run ./hack/image pause -binary PAUSE -out FILE.tar -tag terraplane.local/pause:1
package main

import (
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
	var terraform, providers, out, tag string
	fs.StringVar(&o.Terraplane, "terraplane", "bin/image/terraplane", "statically linked terraplane binary")
	fs.StringVar(&terraform, "terraform", "terraform", "terraform or tofu: a path, or a name looked up in the tool cache, then on PATH")
	fs.StringVar(&o.CACerts, "ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "CA certificate bundle")
	fs.StringVar(&o.ProviderMirror, "mirror", devenv.PluginMirror(), "filesystem mirror the providers come from")
	fs.StringVar(&providers, "providers", "", "provider types to bake into the image, e.g. aws,random (default: none)")
	fs.StringVar(&out, "out", "bin/image", "output directory: oci/ (OCI layout) and terraplane.tar")
	fs.StringVar(&tag, "tag", "terraplane:dev", "image reference written into the tarball")
	_ = fs.Parse(args)
	var err error
	if o.Terraform, err = findBinary(terraform); err != nil {
		return err
	}
	for _, p := range strings.Split(providers, ",") {
		if p = strings.TrimSpace(p); p != "" {
			o.Providers = append(o.Providers, p)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if o.Scratch, err = os.MkdirTemp(out, ".layers-"); err != nil {
		return err
	}
	defer os.RemoveAll(o.Scratch)
	img, err := image.Build(o)
	if err != nil {
		return err
	}
	if err := image.WriteLayout(img, filepath.Join(out, "oci"), tag); err != nil {
		return err
	}
	if err := image.WriteTarball(img, filepath.Join(out, "terraplane.tar"), tag); err != nil {
		return err
	}
	compressed, uncompressed, err := sizes(img)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("built %s (%s): %.1f MB compressed, %.1f MB unpacked; terraform %s, providers [%s]\n",
		tag, digest, mb(compressed), mb(uncompressed), o.Terraform, strings.Join(o.Providers, ","))
	fmt.Printf("  OCI layout %s, tarball %s (docker load, podman load, ctr import)\n",
		filepath.Join(out, "oci"), filepath.Join(out, "terraplane.tar"))
	return nil
}

func push(args []string) error {
	fs := flag.NewFlagSet("push", flag.ExitOnError)
	dir := fs.String("layout", "bin/image/oci", "OCI layout that `image build` wrote")
	to := fs.String("to", "", "registry reference, e.g. registry.example.com/platform/terraplane:v0.1.0")
	_ = fs.Parse(args)
	if *to == "" {
		return fmt.Errorf("push: -to is required (make image-push REGISTRY=host/path)")
	}
	img, err := image.FromLayout(*dir)
	if err != nil {
		return err
	}
	if err := image.Push(img, *to); err != nil {
		return err
	}
	fmt.Println("pushed", *to)
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

// findBinary resolves a path, or a name in the tool cache's bin/ and then on PATH.
func findBinary(nameOrPath string) (string, error) {
	if strings.ContainsRune(nameOrPath, '/') {
		return nameOrPath, nil
	}
	if p := filepath.Join(devenv.BinDir(), nameOrPath); isFile(p) {
		return p, nil
	}
	p, err := exec.LookPath(nameOrPath)
	if err != nil {
		return "", fmt.Errorf("%s is neither in %s nor on PATH", nameOrPath, devenv.BinDir())
	}
	return p, nil
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
