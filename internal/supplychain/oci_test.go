package supplychain

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/sigstore/sigstore/pkg/signature"
)

// pushed pushes a random image to a registry on loopback and returns its reference by digest.
func pushed(t *testing.T) name.Digest {
	t.Helper()
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(strings.TrimPrefix(reg.URL, "http://") + "/platform/terraplane:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return tag.Context().Digest(digest.String())
}

// TestSignAndVerifyInRegistry signs a pushed image, attests it and attaches its SBOM in
// cosign's layout, reads all three back, and checks that another key, a payload changed
// in the registry and a second signing run are told apart.
func TestSignAndVerifyInRegistry(t *testing.T) {
	ref := pushed(t)
	sv, other := newSigner(t), newSigner(t)
	if err := SignManifest(sv, ref); err != nil {
		t.Fatal(err)
	}
	if err := SignManifest(sv, ref); err != nil { // a second run: the same layer is kept once
		t.Fatal(err)
	}
	claims, err := VerifySignatures(sv, ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != 1 || claims[0].Critical.Image.DockerManifestDigest != ref.DigestStr() {
		t.Errorf("claims %+v", claims)
	}
	if _, err := VerifySignatures(other, ref); !errors.Is(err, ErrUnverified) {
		t.Errorf("another key: %v, want ErrUnverified", err)
	}
	checkSigLayout(t, ref)

	doc := Document{SPDXVersion: spdxVersion, Name: "test", Packages: []Package{{SPDXID: "SPDXRef-Package-x", Name: "x"}}}
	if err := AttachSBOM(doc, ref); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSBOM(ref)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(doc, got); d != "" {
		t.Errorf("SBOM read back (-want +got):\n%s", d)
	}

	digest := mustHash(t, ref.DigestStr())
	prov, err := NewStatement(SLSAProvenanceType, NewProvenance(Build{Command: "make release", Builder: "test://builder"}), SubjectOf(ref.Context().Name(), digest))
	if err != nil {
		t.Fatal(err)
	}
	if err := Attest(sv, ref, []Statement{prov}); err != nil {
		t.Fatal(err)
	}
	statements, err := VerifyAttestations(sv, ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(statements) != 1 || statements[0].PredicateType != SLSAProvenanceType {
		t.Errorf("statements %+v", statements)
	}
	if _, err := VerifyAttestations(other, ref); !errors.Is(err, ErrUnverified) {
		t.Errorf("attestations with another key: %v, want ErrUnverified", err)
	}

	tamperSignature(t, ref)
	if _, err := VerifySignatures(sv, ref); !errors.Is(err, ErrUnverified) {
		t.Errorf("a payload changed in the registry: %v, want ErrUnverified", err)
	}
}

// checkSigLayout checks the .sig image as cosign writes it: one simple-signing layer
// with the signature annotation, under sha256-<hex>.sig.
func checkSigLayout(t *testing.T, ref name.Digest) {
	t.Helper()
	img, err := remote.Image(ref.Context().Tag("sha256-" + strings.TrimPrefix(ref.DigestStr(), "sha256:") + ".sig"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != SimpleSigningMediaType || m.Layers[0].Annotations[SignatureAnnotation] == "" ||
		m.MediaType != "application/vnd.oci.image.manifest.v1+json" || m.Config.MediaType != "application/vnd.oci.image.config.v1+json" {
		t.Errorf(".sig manifest %+v", m)
	}
}

// tamperSignature replaces the .sig image with one whose payload names another digest
// but keeps the original signature.
func tamperSignature(t *testing.T, ref name.Digest) {
	t.Helper()
	tag, err := Tag(ref, SignatureSuffix)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := layerBytes(img, m.Layers[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	claims["optional"] = map[string]string{"tampered": "yes"}
	changed, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := mutate.Append(base(), mutate.Addendum{Layer: static.NewLayer(changed, SimpleSigningMediaType), Annotations: m.Layers[0].Annotations})
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, forged); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyEnvelope signs statements as DSSE envelopes and checks that a changed
// payload, another key and a statement about another manifest fail.
func TestVerifyEnvelope(t *testing.T) {
	sv, other := newSigner(t), newSigner(t)
	digest := mustHash(t, testDigest)
	st, err := NewStatement(SPDXPredicateType, Document{SPDXVersion: spdxVersion}, SubjectOf("registry.example.com/platform/terraplane", digest))
	if err != nil {
		t.Fatal(err)
	}
	env, err := SignStatement(sv, st)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		PayloadType string            `json:"payloadType"`
		Payload     string            `json:"payload"`
		Signatures  []json.RawMessage `json:"signatures"`
	}
	if err := json.Unmarshal(env, &e); err != nil {
		t.Fatal(err)
	}
	payload, _ := base64.StdEncoding.DecodeString(e.Payload)
	e.Payload = base64.StdEncoding.EncodeToString([]byte(strings.Replace(string(payload), SPDXPredicateType, SLSAProvenanceType, 1)))
	tampered, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		key     signature.Verifier
		env     []byte
		digest  string
		wantErr bool
	}{
		{name: "signed by the key", key: sv, env: env, digest: testDigest},
		{name: "payload changed", key: sv, env: tampered, digest: testDigest, wantErr: true},
		{name: "another key", key: other, env: env, digest: testDigest, wantErr: true},
		{name: "about another manifest", key: sv, env: env, digest: "sha256:" + strings.Repeat("f", 64), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := VerifyEnvelope(tc.key, tc.env, mustHash(t, tc.digest))
			if tc.wantErr {
				if !errors.Is(err, ErrUnverified) {
					t.Errorf("error %v, want ErrUnverified", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.PredicateType != SPDXPredicateType || got.Type != StatementType {
				t.Errorf("statement %+v", got)
			}
		})
	}
}

// TestProvenance checks the SLSA predicate's materials: the source by commit, the Go
// toolchain and modules once across platforms, the bundled binaries by checksum.
func TestProvenance(t *testing.T) {
	c := Contents{Platform: "linux/amd64", Terraplane: Binary{Build: &buildinfoFixture},
		Terraform: Binary{Name: "tofu", Path: "/usr/local/bin/tofu", SHA256: "aa", Version: "v1.10.10"},
		Providers: []Provider{{Source: "registry.opentofu.org/hashicorp/aws", Version: "5.100.0", Path: "/p", SHA256: "bb"}}}
	arm := c
	arm.Platform = "linux/arm64"
	p := NewProvenance(Build{Command: "make release REGISTRY=r", Source: "https://example.com/terraplane.git", Revision: "abc123",
		Builder: "test://builder", Parameters: map[string]any{"version": "v1"}, Started: time.Unix(0, 0), Finished: time.Unix(60, 0)}, c, arm)
	var names []string
	for _, d := range p.BuildDefinition.ResolvedDependencies {
		names = append(names, d.Name+" "+d.URI+" "+d.Digest["gitCommit"]+d.Digest["sha256"])
	}
	want := []string{
		"source git+https://example.com/terraplane.git@abc123 abc123",
		"go pkg:golang/stdlib@1.26.0 ",
		"example.com/dep pkg:golang/example.com/dep@v1.2.0 ",
		"tofu v1.10.10 linux/amd64  aa",
		"registry.opentofu.org/hashicorp/aws 5.100.0 linux/amd64  bb",
		"tofu v1.10.10 linux/arm64  aa",
		"registry.opentofu.org/hashicorp/aws 5.100.0 linux/arm64  bb",
	}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("materials (-want +got):\n%s", d)
	}
	if p.BuildDefinition.ExternalParameters["command"] != "make release REGISTRY=r" || p.BuildDefinition.ExternalParameters["version"] != "v1" ||
		p.RunDetails.Builder.ID != "test://builder" || p.RunDetails.Metadata.FinishedOn != "1970-01-01T00:01:00Z" {
		t.Errorf("provenance %+v", p)
	}
}

// buildinfoFixture is the build info of a terraplane binary with one module, replaced.
var buildinfoFixture = debug.BuildInfo{GoVersion: "go1.26.0", Path: "terraplane.io/terraplane/cmd/terraplane",
	Main: debug.Module{Path: "terraplane.io/terraplane", Version: "(devel)"},
	Deps: []*debug.Module{{Path: "example.com/dep", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/dep", Version: "v1.2.0"}}}}

func mustHash(t *testing.T, s string) v1.Hash {
	t.Helper()
	h, err := v1.NewHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
