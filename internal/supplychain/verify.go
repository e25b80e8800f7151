package supplychain

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// VerifySignatures checks the signatures of the manifest ref with v, as `cosign verify
// --key` does: it returns the claims of those that verify, and fails when none does.
func VerifySignatures(v signature.Verifier, ref name.Digest, opts ...remote.Option) ([]payload.SimpleContainerImage, error) {
	digest, err := v1.NewHash(ref.DigestStr())
	if err != nil {
		return nil, err
	}
	var verified []payload.SimpleContainerImage
	failed, err := eachLayer(ref, SignatureSuffix, SimpleSigningMediaType, opts, func(raw []byte, ann map[string]string) error {
		claims, err := VerifySimpleSigning(v, raw, ann[SignatureAnnotation], digest)
		if err == nil {
			verified = append(verified, claims)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(verified) == 0 {
		return nil, fmt.Errorf("%w: no signature of %s verifies with the key (%v)", ErrUnverified, ref, errors.Join(failed...))
	}
	return verified, nil
}

// VerifyAttestations checks the attestations of the manifest ref with v, as `cosign
// verify-attestation --key` does: it returns the statements of those that verify and
// are about ref, and fails when none is.
func VerifyAttestations(v signature.Verifier, ref name.Digest, opts ...remote.Option) ([]Statement, error) {
	digest, err := v1.NewHash(ref.DigestStr())
	if err != nil {
		return nil, err
	}
	var verified []Statement
	failed, err := eachLayer(ref, AttestationSuffix, DSSEMediaType, opts, func(raw []byte, _ map[string]string) error {
		st, err := VerifyEnvelope(v, raw, digest)
		if err == nil {
			verified = append(verified, st)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(verified) == 0 {
		return nil, fmt.Errorf("%w: no attestation of %s verifies with the key (%v)", ErrUnverified, ref, errors.Join(failed...))
	}
	return verified, nil
}

// ReadSBOM reads the SPDX SBOM attached to the manifest ref (its .sbom image).
func ReadSBOM(ref name.Digest, opts ...remote.Option) (Document, error) {
	var docs []Document
	failed, err := eachLayer(ref, SBOMSuffix, SPDXJSONMediaType, opts, func(raw []byte, _ map[string]string) error {
		var d Document
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("the SBOM of %s is not SPDX JSON: %w", ref, err)
		}
		docs = append(docs, d)
		return nil
	})
	if err == nil {
		err = errors.Join(failed...)
	}
	if err != nil {
		return Document{}, err
	}
	if len(docs) != 1 {
		return Document{}, fmt.Errorf("%s has %d SPDX SBOMs attached, want 1", ref, len(docs))
	}
	return docs[0], nil
}

// eachLayer calls fn with the content and annotations of each layer of media type mt in
// ref's image of suffix; it returns fn's errors, and an error when the image is missing.
func eachLayer(ref name.Digest, suffix string, mt string, opts []remote.Option, fn func([]byte, map[string]string) error) ([]error, error) {
	tag, err := Tag(ref, suffix)
	if err != nil {
		return nil, err
	}
	img, err := remote.Image(tag, opts...)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", tag, err)
	}
	m, err := img.Manifest()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", tag, err)
	}
	var failed []error
	for _, d := range m.Layers {
		if string(d.MediaType) != mt {
			continue
		}
		raw, err := layerBytes(img, d.Digest)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", tag, err)
		}
		if err := fn(raw, d.Annotations); err != nil {
			failed = append(failed, err)
		}
	}
	return failed, nil
}

func layerBytes(img v1.Image, digest v1.Hash) ([]byte, error) {
	l, err := img.LayerByDigest(digest)
	if err != nil {
		return nil, err
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
