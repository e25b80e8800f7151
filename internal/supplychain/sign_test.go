package supplychain

import (
	"crypto/elliptic"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func testRef(t *testing.T) name.Digest {
	t.Helper()
	ref, err := name.NewDigest("registry.example.com/platform/terraplane@" + testDigest)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func TestSimpleSigningPayload(t *testing.T) {
	raw, err := SimpleSigningPayload(testRef(t))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"critical":{"identity":{"docker-reference":"registry.example.com/platform/terraplane"},` +
		`"image":{"docker-manifest-digest":"` + testDigest + `"},"type":"cosign container image signature"},"optional":null}`
	if d := cmp.Diff(want, string(raw)); d != "" {
		t.Errorf("payload (-want +got):\n%s", d)
	}
}

func TestVerifySimpleSigning(t *testing.T) {
	sv, other := newSigner(t), newSigner(t)
	raw, err := SimpleSigningPayload(testRef(t))
	if err != nil {
		t.Fatal(err)
	}
	sig, err := Sign(sv, raw)
	if err != nil {
		t.Fatal(err)
	}
	digest := v1.Hash{Algorithm: "sha256", Hex: strings.TrimPrefix(testDigest, "sha256:")}
	otherDigest := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("f", 64)}
	tampered := []byte(strings.Replace(string(raw), "0123", "0124", 1))
	otherRaw, err := SimpleSigningPayload(testRef(t).Context().Digest(otherDigest.String()))
	if err != nil {
		t.Fatal(err)
	}
	otherSig, err := Sign(sv, otherRaw)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		key     signature.Verifier
		payload []byte
		sig     string
		digest  v1.Hash
		wantErr string
	}{
		{name: "signed by the key", key: sv, payload: raw, sig: sig, digest: digest},
		{name: "tampered payload", key: sv, payload: tampered, sig: sig, digest: digest, wantErr: "invalid signature"},
		{name: "another key", key: other, payload: raw, sig: sig, digest: digest, wantErr: "invalid signature"},
		{name: "signature of another manifest", key: sv, payload: otherRaw, sig: otherSig, digest: digest, wantErr: "not " + testDigest},
		{name: "signature not base64", key: sv, payload: raw, sig: "%%%", digest: digest, wantErr: "not base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claims, err := VerifySimpleSigning(tc.key, tc.payload, tc.sig, tc.digest)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := claims.Critical.Identity.DockerReference; got != "registry.example.com/platform/terraplane" {
					t.Errorf("docker-reference %q", got)
				}
				return
			}
			if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want ErrUnverified with %q", err, tc.wantErr)
			}
		})
	}
}

func TestLoadSigner(t *testing.T) {
	dir := t.TempDir()
	privPEM, pubPEM := pemPair(t, nil)
	encPEM, encPub := pemPair(t, []byte("s3cret"))
	write := func(name string, raw []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, path string
		password   string
		pub        []byte
		wantErr    string
	}{
		{name: "PKCS#8 PEM", path: write("plain.key", privPEM), pub: pubPEM},
		{name: "cosign's encrypted key", path: write("cosign.key", encPEM), password: "s3cret", pub: encPub},
		{name: "cosign's encrypted key, wrong password", path: write("cosign2.key", encPEM), password: "wrong", wantErr: "decryption failed"},
		{name: "not a key", path: write("junk.key", []byte("junk")), wantErr: "PEM decoding failed"},
		{name: "missing", path: filepath.Join(dir, "none.key"), wantErr: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := LoadSigner(tc.path, []byte(tc.password))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := PublicKeyPEM(s)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(tc.pub), string(got)); d != "" {
				t.Errorf("public key (-want +got):\n%s", d)
			}
		})
	}
}

// pemPair makes an ECDSA P-256 key pair: the PEM private key (cosign's encrypted format
// with a password, else PKCS#8) and the PEM public key.
func pemPair(t *testing.T, password []byte) (privPEM, pubPEM []byte) {
	t.Helper()
	privPEM, pubPEM, err := cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.SkipPassword)
	if err != nil {
		t.Fatal(err)
	}
	if password != nil {
		key, err := cryptoutils.UnmarshalPEMToPrivateKey(privPEM, nil)
		if err != nil {
			t.Fatal(err)
		}
		der, err := cryptoutils.MarshalPrivateKeyToEncryptedDER(key, cryptoutils.StaticPasswordFunc(password))
		if err != nil {
			t.Fatal(err)
		}
		privPEM = pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED SIGSTORE PRIVATE KEY", Bytes: der})
	}
	return privPEM, pubPEM
}

func newSigner(t *testing.T) signature.SignerVerifier {
	t.Helper()
	sv, err := GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	return sv
}
