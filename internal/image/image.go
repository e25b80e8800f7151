package image

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"terraplane.io/terraplane/internal/module"
)

// Paths and identity inside the image.
const (
	BinDir = "/usr/local/bin"
	// Cache is TERRAPLANE_CACHE in the image; the provider mirror is its providers/.
	Cache = "/opt/terraplane"
	// Mirror is the filesystem mirror of Terraform providers (empty without PROVIDERS).
	Mirror = Cache + "/providers"
	// UID and GID of the non-root user the image runs as.
	UID     = 65532
	CACerts = "/etc/ssl/certs/ca-certificates.crt"
)

// Options say what goes into the image.
type Options struct {
	// Terraplane is a statically linked terraplane binary.
	Terraplane string
	// Terraform is the terraform or tofu binary; its base name is its name in the image.
	Terraform string
	// CACerts is a PEM bundle of CA certificates.
	CACerts string
	// ProviderMirror is a filesystem mirror (registry host/namespace/type/version/os_arch).
	ProviderMirror string
	// Providers are the provider types (e.g. aws, random) copied from ProviderMirror.
	Providers []string
	// Scratch is a directory for the compressed layers; they back the image until written.
	Scratch string
}

// Build assembles the image: a base layer (user, CA certificates, writable /tmp), the
// terraform binary, the provider mirror when Providers are named, then terraplane.
func Build(o Options) (v1.Image, error) {
	base, err := writeLayer(o.Scratch, "base", baseEntries(o.CACerts))
	if err != nil {
		return nil, err
	}
	tfName := filepath.Base(o.Terraform)
	tf, err := writeLayer(o.Scratch, "terraform", []entry{{Path: BinDir + "/" + tfName, Mode: 0o755, File: o.Terraform}})
	if err != nil {
		return nil, err
	}
	layers := []v1.Layer{base, tf}
	if len(o.Providers) > 0 {
		entries, err := providerEntries(o.ProviderMirror, module.RegistryHost(tfName), o.Providers)
		if err != nil {
			return nil, err
		}
		l, err := writeLayer(o.Scratch, "providers", entries)
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	tp, err := writeLayer(o.Scratch, "terraplane", []entry{{Path: BinDir + "/terraplane", Mode: 0o755, File: o.Terraplane}})
	if err != nil {
		return nil, err
	}
	layers = append(layers, tp)
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		return nil, fmt.Errorf("assemble image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Config = v1.Config{
		Entrypoint: []string{BinDir + "/terraplane"},
		Cmd:        []string{"controller"},
		User:       fmt.Sprintf("%d:%d", UID, UID),
		WorkingDir: "/tmp",
		Env: []string{
			"PATH=" + BinDir + ":/usr/bin:/bin",
			"HOME=/tmp",
			"SSL_CERT_FILE=" + CACerts,
			"TERRAPLANE_CACHE=" + Cache,
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "terraplane",
			"org.opencontainers.image.licenses": "Apache-2.0",
			"io.terraplane.terraform":           tfName,
			"io.terraplane.providers":           strings.Join(o.Providers, ","),
		},
	}
	return mutate.ConfigFile(img, cfg)
}

// baseEntries are the files every image holds: passwd and group with the non-root user,
// the CA bundle, a world-writable /tmp and the (possibly empty) provider mirror.
func baseEntries(caCerts string) []entry {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nterraplane:x:%d:%d:terraplane:/tmp:/sbin/nologin\n", UID, UID)
	group := fmt.Sprintf("root:x:0:\nterraplane:x:%d:\n", UID)
	return []entry{
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte(passwd)},
		{Path: "/etc/group", Mode: 0o644, Data: []byte(group)},
		{Path: CACerts, Mode: 0o644, File: caCerts},
		{Path: "/tmp", Mode: 0o1777, Dir: true},
		{Path: Mirror, Mode: 0o755, Dir: true},
	}
}

// providerEntries lists the mirror's packages of the named provider types from host's
// tree, for the linux_amd64 platform, under Mirror in the image.
func providerEntries(mirror, host string, types []string) ([]entry, error) {
	var out []entry
	for _, typ := range types {
		typ = strings.TrimSpace(typ)
		matches, err := filepath.Glob(filepath.Join(mirror, host, "*", typ, "*", "linux_amd64", "terraform-provider-"+typ+"*"))
		if err != nil {
			return nil, err
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("provider %q is not in the mirror %s under %s (hack/install-tools.sh providers fills it)", typ, mirror, host)
		}
		for _, m := range matches {
			rel, err := filepath.Rel(mirror, m)
			if err != nil {
				return nil, err
			}
			out = append(out, entry{Path: Mirror + "/" + filepath.ToSlash(rel), Mode: 0o755, File: m})
		}
	}
	return out, nil
}

// WriteLayout writes img as an OCI image layout in dir (what `crane push DIR` reads),
// replacing what was there.
func WriteLayout(img v1.Image, dir, ref string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write OCI layout: %w", err)
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref}))
}

// WriteTarball writes img as an image tarball tagged ref, which `docker load`,
// `podman load` and `ctr import` read.
func WriteTarball(img v1.Image, path, ref string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	return tarball.WriteToFile(path, tag, img)
}

// Push pushes img to ref with the credentials of the local Docker configuration.
func Push(img v1.Image, ref string, opts ...name.Option) error {
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	if err := remote.Write(r, img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	return nil
}

// FromLayout reads the single image of the OCI layout in dir.
func FromLayout(dir string) (v1.Image, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("read OCI layout %s: %w", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("OCI layout %s holds %d images, want 1", dir, len(m.Manifests))
	}
	return idx.Image(m.Manifests[0].Digest)
}
