package supplychain

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/sigstore/sigstore/pkg/signature"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
)

// In-toto types.
const (
	// StatementType is the in-toto Statement v1 type.
	StatementType = "https://in-toto.io/Statement/v1"
	// InTotoPayloadType is the DSSE payload type of an in-toto statement.
	InTotoPayloadType = "application/vnd.in-toto+json"
	// SLSAProvenanceType is the predicate type of SLSA provenance v1 (cosign's slsaprovenance1).
	SLSAProvenanceType = "https://slsa.dev/provenance/v1"
	// SPDXPredicateType is the predicate type of an SPDX document (cosign's spdxjson).
	SPDXPredicateType = "https://spdx.dev/Document"
)

// Statement is an in-toto statement: what its predicate says about its subjects.
type Statement struct {
	Type          string          `json:"_type"`
	Subject       []Subject       `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

// Subject is an artefact a statement is about: a manifest, by its repository and digest.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// NewStatement is the statement of predicate (marshalled to JSON) about subjects.
func NewStatement(predicateType string, predicate any, subjects ...Subject) (Statement, error) {
	raw, err := json.Marshal(predicate)
	if err != nil {
		return Statement{}, fmt.Errorf("marshal the %s predicate: %w", predicateType, err)
	}
	return Statement{Type: StatementType, Subject: subjects, PredicateType: predicateType, Predicate: raw}, nil
}

// SubjectOf is the subject of the manifest digest in the repository repo.
func SubjectOf(repo string, digest v1.Hash) Subject {
	return Subject{Name: repo, Digest: map[string]string{digest.Algorithm: digest.Hex}}
}

// About says whether the statement has the manifest digest among its subjects.
func (s Statement) About(digest v1.Hash) bool {
	return slices.ContainsFunc(s.Subject, func(sub Subject) bool { return sub.Digest[digest.Algorithm] == digest.Hex })
}

// SignStatement signs st as a DSSE envelope (the in-toto payload type), as cosign attest does.
func SignStatement(s signature.Signer, st Statement) ([]byte, error) {
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("marshal the statement: %w", err)
	}
	env, err := sigdsse.WrapSigner(s, InTotoPayloadType).SignMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("sign the %s statement: %w", st.PredicateType, err)
	}
	return env, nil
}

// VerifyEnvelope checks that the DSSE envelope env is signed by v and holds an in-toto
// statement about the manifest digest, and returns the statement.
func VerifyEnvelope(v signature.Verifier, env []byte, digest v1.Hash) (Statement, error) {
	var st Statement
	if err := sigdsse.WrapVerifier(v).VerifySignature(bytes.NewReader(env), nil); err != nil {
		return st, fmt.Errorf("%w: %v", ErrUnverified, err)
	}
	var e dsse.Envelope
	if err := json.Unmarshal(env, &e); err != nil {
		return st, fmt.Errorf("%w: not a DSSE envelope: %v", ErrUnverified, err)
	}
	if e.PayloadType != InTotoPayloadType {
		return st, fmt.Errorf("%w: the envelope holds %q, not an in-toto statement", ErrUnverified, e.PayloadType)
	}
	raw, err := base64.StdEncoding.DecodeString(e.Payload)
	if err != nil {
		return st, fmt.Errorf("%w: the envelope's payload is not base64: %v", ErrUnverified, err)
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, fmt.Errorf("%w: the envelope's payload is not an in-toto statement: %v", ErrUnverified, err)
	}
	if !st.About(digest) {
		return st, fmt.Errorf("%w: the %s statement is not about %s", ErrUnverified, st.PredicateType, digest)
	}
	return st, nil
}
