package supplychain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
)

// TestGitURI: the source's VCS locator has one git+ prefix, and says unknown when the
// repository's address is not known.
func TestGitURI(t *testing.T) {
	for _, tc := range []struct{ source, want string }{
		{"https://example.com/terraplane.git", "git+https://example.com/terraplane.git@abc"},
		{"git+ssh://git@example.com/terraplane.git", "git+ssh://git@example.com/terraplane.git@abc"},
		{"", "git+unknown@abc"},
	} {
		if got := gitURI(tc.source, "abc"); got != tc.want {
			t.Errorf("gitURI(%q) = %q, want %q", tc.source, got, tc.want)
		}
	}
}

// TestMaterialsEdges: a build without a revision names no source; contents without Go
// build info add no Go materials; a module's go.sum line is kept as an annotation; a
// terraform binary of unknown version says so; an image without terraform lists none;
// the build's times are UTC, and absent when unknown.
func TestMaterialsEdges(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Deps: []*debug.Module{
		{Path: "example.com/b", Version: "v2.0.0", Sum: "h1:bbb="},
		{Path: "example.com/a", Version: "v1.0.0"},
	}}
	withGo := Contents{Platform: "linux/amd64", Terraplane: Binary{Build: bi},
		Terraform: Binary{Name: "tofu", Path: "/usr/local/bin/tofu", SHA256: "aa"}}
	noGo := Contents{Platform: "linux/arm64"}
	p := NewProvenance(Build{Started: time.Date(2026, 1, 2, 4, 4, 5, 0, time.FixedZone("CET", 3600))}, withGo, noGo)
	var got []string
	for _, d := range p.BuildDefinition.ResolvedDependencies {
		got = append(got, fmt.Sprintf("%s|%s|%v|%v", d.Name, d.URI, d.Digest, d.Annotations))
	}
	want := []string{
		"go|pkg:golang/stdlib@1.26.0|map[]|map[]",
		"example.com/a|pkg:golang/example.com/a@v1.0.0|map[]|map[]",
		"example.com/b|pkg:golang/example.com/b@v2.0.0|map[]|map[go.sum:h1:bbb=]",
		"tofu NOASSERTION linux/amd64||map[sha256:aa]|map[path:/usr/local/bin/tofu]",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("materials (-want +got):\n%s", d)
	}
	if m := p.RunDetails.Metadata; m.StartedOn != "2026-01-02T03:04:05Z" || m.FinishedOn != "" {
		t.Errorf("times %+v, want the start in UTC and no finish", m)
	}
	if p.BuildDefinition.BuildType != BuildType {
		t.Errorf("build type %q", p.BuildDefinition.BuildType)
	}
	if got := NewProvenance(Build{Revision: "abc"}, noGo).BuildDefinition.ResolvedDependencies; len(got) != 1 || got[0].URI != "git+unknown@abc" {
		t.Errorf("materials of a source-only build: %+v", got)
	}
}

// TestStatementAbout: a statement is about a digest only when one of its subjects has
// it, under the same algorithm.
func TestStatementAbout(t *testing.T) {
	d := mustHash(t, testDigest)
	other := mustHash(t, "sha256:"+strings.Repeat("f", 64))
	st, err := NewStatement(SLSAProvenanceType, Provenance{}, SubjectOf("r/a", other), SubjectOf("r/b", d))
	if err != nil {
		t.Fatal(err)
	}
	if !st.About(d) || !st.About(other) {
		t.Error("a statement is not about its second subject")
	}
	if st.About(mustHash(t, "sha256:"+strings.Repeat("e", 64))) {
		t.Error("a statement is about a digest none of its subjects has")
	}
	sha512 := Statement{Subject: []Subject{{Name: "r", Digest: map[string]string{"sha512": d.Hex}}}}
	if sha512.About(d) {
		t.Error("a sha512 subject with the same hex counts as the sha256 digest")
	}
	if _, err := NewStatement(SPDXPredicateType, func() {}); err == nil || !strings.Contains(err.Error(), SPDXPredicateType) {
		t.Errorf("a predicate that is no JSON: %v, want an error naming its type", err)
	}
}

// TestVerifyEnvelopeRefuses: a correctly signed envelope is still refused when it does
// not hold an in-toto statement, or is not an envelope at all.
func TestVerifyEnvelopeRefuses(t *testing.T) {
	sv := newSigner(t)
	digest := mustHash(t, testDigest)
	sign := func(payloadType string, payload []byte) []byte {
		env, err := sigdsse.WrapSigner(sv, payloadType).SignMessage(bytes.NewReader(payload))
		if err != nil {
			t.Fatal(err)
		}
		return env
	}
	st, err := NewStatement(SPDXPredicateType, Document{}, SubjectOf("r", digest))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		env  []byte
		want string
	}{
		"another payload type": {sign("text/plain", raw), `holds "text/plain"`},
		"not a statement":      {sign(InTotoPayloadType, []byte("[1,2]")), "not an in-toto statement"},
		"not an envelope":      {[]byte("junk"), "not verified"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := VerifyEnvelope(sv, tc.env, digest)
			if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("VerifyEnvelope = %v, want ErrUnverified saying %q", err, tc.want)
			}
		})
	}
}

// TestLoadVerifier: the public key PublicKeyPEM writes verifies what its signer signs,
// and nothing another key signs; what is not a PEM public key is refused.
func TestLoadVerifier(t *testing.T) {
	sv, other := newSigner(t), newSigner(t)
	pub, err := PublicKeyPEM(sv)
	if err != nil {
		t.Fatal(err)
	}
	v, err := LoadVerifier(pub)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := SimpleSigningPayload(testRef(t))
	if err != nil {
		t.Fatal(err)
	}
	mine, err := Sign(sv, raw)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := Sign(other, raw)
	if err != nil {
		t.Fatal(err)
	}
	digest := mustHash(t, testDigest)
	if _, err := VerifySimpleSigning(v, raw, mine, digest); err != nil {
		t.Errorf("the loaded key does not verify its signer's signature: %v", err)
	}
	if _, err := VerifySimpleSigning(v, raw, theirs, digest); err == nil {
		t.Error("the loaded key verifies another key's signature")
	}
	priv, _ := pemPair(t, nil)
	for name, in := range map[string][]byte{"junk": []byte("junk"), "a private key": priv, "empty": nil} {
		if _, err := LoadVerifier(in); err == nil || !strings.Contains(err.Error(), "public key") {
			t.Errorf("%s: LoadVerifier = %v, want an error about the public key", name, err)
		}
	}
}

// TestTag: cosign's attachment tags sit in the manifest's repository, named by its
// digest with ':' as '-'.
func TestTag(t *testing.T) {
	ref := testRef(t)
	for _, suffix := range []string{SignatureSuffix, AttestationSuffix, SBOMSuffix} {
		tag, err := Tag(ref, suffix)
		if err != nil {
			t.Fatal(err)
		}
		want := "registry.example.com/platform/terraplane:sha256-" + strings.TrimPrefix(testDigest, "sha256:") + "." + suffix
		if tag.String() != want {
			t.Errorf("Tag(%s) = %s, want %s", suffix, tag, want)
		}
	}
}

// TestIsNotFound: a registry's 404, or its MANIFEST_UNKNOWN or NAME_UNKNOWN under any
// status, means no attachment yet; a refusal or any other error does not.
func TestIsNotFound(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"404": {&transport.Error{StatusCode: http.StatusNotFound}, true},
		"manifest unknown": {&transport.Error{StatusCode: http.StatusBadRequest,
			Errors: []transport.Diagnostic{{Code: transport.ManifestUnknownErrorCode}}}, true},
		"name unknown, wrapped": {fmt.Errorf("read: %w", &transport.Error{StatusCode: http.StatusBadRequest,
			Errors: []transport.Diagnostic{{Code: transport.NameUnknownErrorCode}}}), true},
		"unauthorized": {&transport.Error{StatusCode: http.StatusUnauthorized,
			Errors: []transport.Diagnostic{{Code: transport.UnauthorizedErrorCode}}}, false},
		"server error":     {&transport.Error{StatusCode: http.StatusInternalServerError}, false},
		"not a registry's": {errors.New("connection refused"), false},
		"none":             {nil, false},
	} {
		if got := isNotFound(tc.err); got != tc.want {
			t.Errorf("%s: isNotFound = %v, want %v", name, got, tc.want)
		}
	}
}
