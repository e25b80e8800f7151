package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/signature"

	"terraplane.io/terraplane/internal/supplychain"
)

// described is an image of the index with what it bundles and its SBOM.
type described struct {
	digest   v1.Hash
	contents supplychain.Contents
	sbom     supplychain.Document
}

// describe reads what each image of idx bundles and makes its SBOM, naming the images
// repo@digest, and writes the SBOMs into out/sbom.
func describe(o options, idx v1.ImageIndex, repo string, created time.Time) ([]described, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("read the image index: %w", err)
	}
	var out []described
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, fmt.Errorf("read the image %s: %w", d.Digest, err)
		}
		c, err := supplychain.ReadContents(img, o.version)
		if err != nil {
			return nil, err
		}
		doc := supplychain.SBOM(c, supplychain.ImageRef{Repository: repo, Digest: d.Digest.String()}, created)
		path := filepath.Join(o.out, "sbom", "terraplane-"+strings.ReplaceAll(c.Platform, "/", "-")+".spdx.json")
		if err := writeJSON(path, doc); err != nil {
			return nil, err
		}
		fmt.Printf("SBOM of %s (%s): %s, %d packages\n", c.Platform, d.Digest, path, len(doc.Packages))
		out = append(out, described{digest: d.Digest, contents: c, sbom: doc})
	}
	return out, nil
}

// provenance is the SLSA provenance statement of the build about subjects, also written
// to out/provenance.json.
func provenance(o options, images []described, subjects []supplychain.Subject) (supplychain.Statement, error) {
	var contents []supplychain.Contents
	for _, d := range images {
		contents = append(contents, d.contents)
	}
	b := supplychain.Build{
		Command: o.command, Source: o.source, Revision: o.revision, Builder: o.builder,
		Parameters: map[string]any{"version": o.version, "registry": o.registry},
		Started:    o.started, Finished: time.Now(),
	}
	st, err := supplychain.NewStatement(supplychain.SLSAProvenanceType, supplychain.NewProvenance(b, contents...), subjects...)
	if err != nil {
		return st, err
	}
	path := filepath.Join(o.out, "provenance.json")
	if err := writeJSON(path, st); err != nil {
		return st, err
	}
	fmt.Printf("provenance: %s\n", path)
	return st, nil
}

// signer is the release's key: COSIGN_KEY's, else one made for this run, whose public key
// is printed. Either way the public key is written to out/cosign.pub.
func signer(o options) (signature.SignerVerifier, error) {
	var sv signature.SignerVerifier
	var err error
	if o.key != "" {
		sv, err = supplychain.LoadSigner(o.key, []byte(os.Getenv("COSIGN_PASSWORD")))
	} else {
		sv, err = supplychain.GenerateSigner()
	}
	if err != nil {
		return nil, err
	}
	pub, err := supplychain.PublicKeyPEM(sv)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(o.out, "cosign.pub")
	if err := os.WriteFile(path, pub, 0o644); err != nil {
		return nil, fmt.Errorf("write the public key: %w", err)
	}
	if o.key == "" {
		fmt.Printf("NOTE: no COSIGN_KEY: this release is signed with an ephemeral key made for this run and then "+
			"forgotten; only %s verifies it. Set COSIGN_KEY to a PEM private key to sign a release others verify.\n%s", path, pub)
	} else {
		fmt.Printf("signing with %s; public key %s\n", o.key, path)
	}
	return sv, nil
}

// signAll signs the index, each image and the chart, attaches each image's SBOM (as a
// .sbom image and as a signed SPDX attestation) and attests the provenance of all.
func signAll(o options, sv signature.SignerVerifier, index, chart name.Digest, images []described, prov supplychain.Statement) error {
	opts := []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	for _, ref := range []name.Digest{index, chart} {
		if err := supplychain.SignManifest(sv, ref, opts...); err != nil {
			return err
		}
		if err := supplychain.Attest(sv, ref, []supplychain.Statement{prov}, opts...); err != nil {
			return err
		}
	}
	for _, d := range images {
		ref := index.Context().Digest(d.digest.String())
		if err := supplychain.SignManifest(sv, ref, opts...); err != nil {
			return err
		}
		if err := supplychain.AttachSBOM(d.sbom, ref, opts...); err != nil {
			return err
		}
		spdx, err := supplychain.NewStatement(supplychain.SPDXPredicateType, d.sbom, supplychain.SubjectOf(ref.Context().Name(), d.digest))
		if err != nil {
			return err
		}
		if err := supplychain.Attest(sv, ref, []supplychain.Statement{prov, spdx}, opts...); err != nil {
			return err
		}
	}
	fmt.Printf("signed %s, its %d images and %s; SBOMs attached to each image; provenance attested\n", index, len(images), chart)
	return nil
}

func writeJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("marshal %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o644)
}
