package supplychain

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/sigstore/sigstore/pkg/signature"
)

// The suffixes of the tags cosign keeps a manifest's signatures, attestations and SBOM under.
const (
	SignatureSuffix   = "sig"
	AttestationSuffix = "att"
	SBOMSuffix        = "sbom"
)

// Tag is the tag cosign keeps what is attached to the manifest ref under:
// REPOSITORY:sha256-<hex>.<suffix>.
func Tag(ref name.Digest, suffix string) (name.Tag, error) {
	h, err := v1.NewHash(ref.DigestStr())
	if err != nil {
		return name.Tag{}, fmt.Errorf("digest of %s: %w", ref, err)
	}
	return ref.Context().Tag(h.Algorithm + "-" + h.Hex + "." + suffix), nil
}

// SignManifest signs the manifest ref with s and appends the signature to its .sig
// image, as `cosign sign --key` does (with no transparency log); a signature of the same
// payload by the same key already there is kept, and no other added.
func SignManifest(s signature.SignerVerifier, ref name.Digest, opts ...remote.Option) error {
	raw, err := SimpleSigningPayload(ref)
	if err != nil {
		return err
	}
	sig, err := Sign(s, raw)
	if err != nil {
		return err
	}
	digest, err := v1.NewHash(ref.DigestStr())
	if err != nil {
		return err
	}
	same := func(l []byte, ann map[string]string) bool {
		_, err := VerifySimpleSigning(s, l, ann[SignatureAnnotation], digest)
		return err == nil && string(l) == string(raw)
	}
	return appendLayer(ref, SignatureSuffix, raw, SimpleSigningMediaType, map[string]string{SignatureAnnotation: sig}, same, opts)
}

// Attest signs each statement as a DSSE envelope and appends it to the .att image of the
// manifest ref, as `cosign attest --key` does (with no transparency log); the same
// statement signed by the same key already there is kept, and no other added.
func Attest(s signature.SignerVerifier, ref name.Digest, statements []Statement, opts ...remote.Option) error {
	digest, err := v1.NewHash(ref.DigestStr())
	if err != nil {
		return err
	}
	for _, st := range statements {
		want, err := json.Marshal(st)
		if err != nil {
			return fmt.Errorf("marshal the statement: %w", err)
		}
		same := func(l []byte, _ map[string]string) bool {
			got, err := VerifyEnvelope(s, l, digest)
			if err != nil {
				return false
			}
			raw, err := json.Marshal(got)
			return err == nil && string(raw) == string(want)
		}
		env, err := SignStatement(s, st)
		if err != nil {
			return err
		}
		ann := map[string]string{SignatureAnnotation: "", PredicateTypeAnnotation: st.PredicateType}
		if err := appendLayer(ref, AttestationSuffix, env, DSSEMediaType, ann, same, opts); err != nil {
			return err
		}
	}
	return nil
}

// AttachSBOM writes doc as the .sbom image of the manifest ref (SPDX JSON), replacing
// any there, as `cosign attach sbom --type spdxjson` does.
func AttachSBOM(doc Document, ref name.Digest, opts ...remote.Option) error {
	raw, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("marshal the SBOM: %w", err)
	}
	tag, err := Tag(ref, SBOMSuffix)
	if err != nil {
		return err
	}
	img, err := mutate.Append(base(), mutate.Addendum{Layer: static.NewLayer(raw, SPDXJSONMediaType)})
	if err != nil {
		return fmt.Errorf("assemble the SBOM of %s: %w", ref, err)
	}
	if err := remote.Write(tag, img, opts...); err != nil {
		return fmt.Errorf("push %s: %w", tag, err)
	}
	return nil
}

// base is cosign's empty image for attachments: an OCI manifest with an OCI config.
func base() v1.Image {
	return mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
}

// appendLayer appends a layer of raw to the image REPOSITORY:sha256-<hex>.<suffix>,
// creating it when absent, unless a layer there of that media type is the same as far
// as same (given its content and annotations) tells.
func appendLayer(ref name.Digest, suffix string, raw []byte, mt types.MediaType, ann map[string]string,
	same func([]byte, map[string]string) bool, opts []remote.Option) error {
	tag, err := Tag(ref, suffix)
	if err != nil {
		return err
	}
	img, err := existing(tag, opts)
	if err != nil {
		return err
	}
	if dup, err := holds(img, mt, same); err != nil || dup {
		return err
	}
	if img, err = mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(raw, mt), Annotations: ann}); err != nil {
		return fmt.Errorf("assemble %s: %w", tag, err)
	}
	if err := remote.Write(tag, img, opts...); err != nil {
		return fmt.Errorf("push %s: %w", tag, err)
	}
	return nil
}

// existing is the image at tag, or cosign's empty base when there is none.
func existing(tag name.Tag, opts []remote.Option) (v1.Image, error) {
	img, err := remote.Image(tag, opts...)
	if isNotFound(err) {
		return base(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", tag, err)
	}
	return img, nil
}

// holds says whether img has a layer of media type mt that same says is the same.
func holds(img v1.Image, mt types.MediaType, same func([]byte, map[string]string) bool) (bool, error) {
	m, err := img.Manifest()
	if err != nil {
		return false, fmt.Errorf("read the manifest: %w", err)
	}
	for _, l := range m.Layers {
		if l.MediaType != mt {
			continue
		}
		raw, err := layerBytes(img, l.Digest)
		if err != nil {
			return false, fmt.Errorf("read a layer: %w", err)
		}
		if same(raw, l.Annotations) {
			return true, nil
		}
	}
	return false, nil
}

// isNotFound says whether err is a registry's answer that a manifest does not exist.
func isNotFound(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	if te.StatusCode == http.StatusNotFound {
		return true
	}
	for _, d := range te.Errors {
		if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
			return true
		}
	}
	return false
}
