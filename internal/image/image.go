package image

import (
	"fmt"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

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
	// Terraform is the terraform or tofu binary; its base name, terraform or tofu, is its
	// name in the image, and the controller runs it by that name (TERRAPLANE_TERRAFORM).
	Terraform string
	// CACerts is a PEM bundle of CA certificates.
	CACerts string
	// ProviderMirror is a filesystem mirror (registry host/namespace/type/version/os_arch).
	ProviderMirror string
	// Providers are the provider types (e.g. aws, random) copied from ProviderMirror.
	Providers []string
	// Scratch is a directory for the compressed layers; they back the image until written.
	Scratch string
	// Platform is the image's (linux/amd64 when empty); the binaries must be built for it.
	Platform v1.Platform
	// Version, Revision and Source become the org.opencontainers.image labels of those
	// names: git describe's version, the commit, the repository's address (each optional).
	Version, Revision, Source string
}

// Build assembles the image: a base layer (user, CA certificates, writable /tmp), the
// terraform binary, the provider mirror when Providers are named, then terraplane.
func Build(o Options) (v1.Image, error) {
	if o.Platform.OS == "" {
		o.Platform = v1.Platform{OS: "linux", Architecture: "amd64"}
	}
	tfName := filepath.Base(o.Terraform)
	licence, err := terraformLicence(tfName)
	if err != nil {
		return nil, err
	}
	var provLicences []string
	layers, err := o.layers(tfName, &provLicences)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layers...)
	if err != nil {
		return nil, fmt.Errorf("assemble image: %w", err)
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS, cfg.Variant = o.Platform.Architecture, o.Platform.OS, o.Platform.Variant
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
			"TERRAPLANE_TERRAFORM=" + tfName,
		},
		Labels: o.labels(tfName, licence, provLicences),
	}
	return mutate.ConfigFile(img, cfg)
}

// layers writes the image's layers in o.Scratch: base, terraform, the providers (when
// named, setting their licences), terraplane.
func (o Options) layers(tfName string, licences *[]string) ([]v1.Layer, error) {
	base, err := writeLayer(o.Scratch, "base", baseEntries(o.CACerts))
	if err != nil {
		return nil, err
	}
	tf, err := writeLayer(o.Scratch, "terraform", []entry{{Path: BinDir + "/" + tfName, Mode: 0o755, File: o.Terraform}})
	if err != nil {
		return nil, err
	}
	layers := []v1.Layer{base, tf}
	if len(o.Providers) > 0 {
		entries, err := providerEntries(o.ProviderMirror, module.RegistryHost(tfName), o.Platform.OS+"_"+o.Platform.Architecture, o.Providers)
		if err != nil {
			return nil, err
		}
		*licences = providerLicences(entries)
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
	for i, l := range layers {
		layers[i] = ociLayer{l}
	}
	return layers, nil
}

// ociLayer is a layer whose manifest entry has the OCI media type.
type ociLayer struct{ v1.Layer }

// MediaType is the OCI gzip-compressed layer's.
func (ociLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }

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
// tree, for platform (e.g. linux_amd64), under Mirror in the image.
func providerEntries(mirror, host, platform string, names []string) ([]entry, error) {
	var out []entry
	for _, typ := range names {
		typ = strings.TrimSpace(typ)
		matches, err := filepath.Glob(filepath.Join(mirror, host, "*", typ, "*", platform, "terraform-provider-"+typ+"*"))
		if err != nil {
			return nil, err
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("provider %q for %s is not in the mirror %s under %s (hack/install-tools.sh providers fills it with linux_amd64 only)",
				typ, platform, mirror, host)
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
