package supplychain

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/payload"
)

// Media types and annotations of cosign's signature and attestation layers.
const (
	// SimpleSigningMediaType is the media type of a signature layer: its content is the
	// simple-signing payload that was signed.
	SimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	// SignatureAnnotation holds a layer's base64 signature (empty on attestations, whose
	// DSSE envelope holds its own).
	SignatureAnnotation = "dev.cosignproject.cosign/signature"
	// DSSEMediaType is the media type of an attestation layer: a DSSE envelope.
	DSSEMediaType = "application/vnd.dsse.envelope.v1+json"
	// PredicateTypeAnnotation names an attestation layer's predicate type.
	PredicateTypeAnnotation = "predicateType"
	// SPDXJSONMediaType is the media type of an SPDX JSON SBOM (cosign attach sbom --type spdxjson).
	SPDXJSONMediaType = "text/spdx+json"
)

// ErrUnverified is returned (wrapped) when a signature does not verify with the key, or
// signs another manifest than the one asked about.
var ErrUnverified = errors.New("signature not verified")

// SimpleSigningPayload is the payload cosign signs for the manifest ref: its docker-reference
// is ref's repository, its docker-manifest-digest ref's digest, and it has no optional claims.
func SimpleSigningPayload(ref name.Digest) ([]byte, error) {
	raw, err := json.Marshal(payload.Cosign{Image: ref})
	if err != nil {
		return nil, fmt.Errorf("simple-signing payload of %s: %w", ref, err)
	}
	return raw, nil
}

// Sign signs raw with s (ECDSA over its SHA-256) and returns the signature in base64, as
// the signature annotation holds it.
func Sign(s signature.Signer, raw []byte) (string, error) {
	sig, err := s.SignMessage(bytes.NewReader(raw))
	if err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	return base64.StdEncoding.EncodeToString(sig), nil
}

// VerifySimpleSigning checks that b64sig is v's signature of raw, and that raw is a
// cosign simple-signing payload of the manifest digest; it returns the payload's claims.
func VerifySimpleSigning(v signature.Verifier, raw []byte, b64sig string, digest v1.Hash) (payload.SimpleContainerImage, error) {
	var claims payload.SimpleContainerImage
	sig, err := base64.StdEncoding.DecodeString(b64sig)
	if err != nil {
		return claims, fmt.Errorf("%w: the signature is not base64: %v", ErrUnverified, err)
	}
	if err := v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(raw)); err != nil {
		return claims, fmt.Errorf("%w: %v", ErrUnverified, err)
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		return claims, fmt.Errorf("%w: the signed payload is not simple-signing JSON: %v", ErrUnverified, err)
	}
	if claims.Critical.Type != payload.CosignSignatureType {
		return claims, fmt.Errorf("%w: the signed payload's type is %q", ErrUnverified, claims.Critical.Type)
	}
	if got := claims.Critical.Image.DockerManifestDigest; got != digest.String() {
		return claims, fmt.Errorf("%w: the signed payload is of %s, not %s", ErrUnverified, got, digest)
	}
	return claims, nil
}
