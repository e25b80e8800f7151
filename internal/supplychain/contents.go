package supplychain

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"terraplane.io/terraplane/internal/image"
)

// Contents is what an image bundles, read from its file system: the terraplane binary's
// build info, the terraform binary and the providers of its mirror.
type Contents struct {
	// Platform is the image's (os/arch).
	Platform string
	// Licences is the SPDX expression of the image's licence label.
	Licences string
	// Terraplane is the terraplane binary, with its build info.
	Terraplane Binary
	// Terraform is the tofu or terraform binary.
	Terraform Binary
	// Providers are the provider packages in the image's filesystem mirror.
	Providers []Provider
}

// Binary is an executable in the image.
type Binary struct {
	// Path is its path in the image; Name its base name.
	Path, Name string
	// SHA256 is the hex SHA-256 of the file.
	SHA256 string
	// Version is its version, "" when it cannot be told.
	Version string
	// Build is its Go build info, nil if it has none.
	Build *buildinfo.BuildInfo
}

// Provider is a provider package in the image's mirror.
type Provider struct {
	// Source is host/namespace/type; Version its version.
	Source, Namespace, Type, Version string
	// Path is its path in the image; SHA256 the hex SHA-256 of the file.
	Path, SHA256 string
}

// ReadContents reads what img bundles from its file system; version is the release's,
// which terraplane's build info does not hold.
func ReadContents(img v1.Image, version string) (Contents, error) {
	cfg, err := img.ConfigFile()
	if err != nil {
		return Contents{}, fmt.Errorf("read the image's config: %w", err)
	}
	c := Contents{Platform: cfg.OS + "/" + cfg.Architecture, Licences: cfg.Config.Labels[image.LabelLicenses]}
	tfName := cfg.Config.Labels[image.LabelTerraform]
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c, fmt.Errorf("read the image's files: %w", err)
		}
		if err := c.add(tr, "/"+strings.TrimPrefix(hdr.Name, "/"), hdr, tfName); err != nil {
			return c, err
		}
	}
	sort.Slice(c.Providers, func(i, j int) bool { return c.Providers[i].Path < c.Providers[j].Path })
	if c.Terraplane.Build == nil {
		return c, fmt.Errorf("the %s image has no %s/terraplane with Go build info", c.Platform, image.BinDir)
	}
	c.Terraplane.Version = version
	return c, nil
}

// add records the file p if it is one the SBOM lists.
func (c *Contents) add(r io.Reader, p string, hdr *tar.Header, tfName string) error {
	if hdr.Typeflag != tar.TypeReg {
		return nil
	}
	switch {
	case p == image.BinDir+"/terraplane":
		b, err := readBinary(r, p)
		c.Terraplane = b
		return err
	case tfName != "" && p == image.BinDir+"/"+tfName:
		b, err := readBinary(r, p)
		b.Version = moduleVersion(b.Build)
		c.Terraform = b
		return err
	case strings.HasPrefix(p, image.Mirror+"/"):
		return c.addProvider(r, p)
	}
	return nil
}

// addProvider records the provider package at p (Mirror/host/namespace/type/version/os_arch/file).
func (c *Contents) addProvider(r io.Reader, p string) error {
	parts := strings.Split(strings.TrimPrefix(p, image.Mirror+"/"), "/")
	if len(parts) != 6 {
		return nil
	}
	sum := sha256.New()
	if _, err := io.Copy(sum, r); err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	c.Providers = append(c.Providers, Provider{
		Source: path.Join(parts[0], parts[1], parts[2]), Namespace: parts[1], Type: parts[2], Version: parts[3],
		Path: p, SHA256: hex.EncodeToString(sum.Sum(nil)),
	})
	return nil
}

// readBinary reads the executable at p: its checksum and Go build info.
func readBinary(r io.Reader, p string) (Binary, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return Binary{}, fmt.Errorf("read %s: %w", p, err)
	}
	sum := sha256.Sum256(raw)
	b := Binary{Path: p, Name: path.Base(p), SHA256: hex.EncodeToString(sum[:])}
	if bi, err := buildinfo.Read(bytes.NewReader(raw)); err == nil {
		b.Build = bi
	}
	return b, nil
}

// moduleVersion is the version of the module a Go binary's main package comes from: the
// main module's, or, for a binary built from a module that requires it (as the tool
// cache builds OpenTofu), that dependency's; "" when the build info does not say.
func moduleVersion(bi *buildinfo.BuildInfo) string {
	if bi == nil {
		return ""
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	for _, d := range bi.Deps {
		if bi.Path == d.Path || strings.HasPrefix(bi.Path, d.Path+"/") {
			return d.Version
		}
	}
	return ""
}
