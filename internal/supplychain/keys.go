package supplychain

import (
	"crypto"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"os"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// LoadSigner reads the PEM private key at path: PKCS#8 ("PRIVATE KEY"), SEC 1
// ("EC PRIVATE KEY"), or cosign's own encrypted format ("ENCRYPTED SIGSTORE PRIVATE KEY",
// what `cosign generate-key-pair` writes), decrypted with password.
func LoadSigner(path string, password []byte) (signature.SignerVerifier, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the signing key: %w", err)
	}
	key, err := cryptoutils.UnmarshalPEMToPrivateKey(raw, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return nil, fmt.Errorf("parse the signing key %s: %w", path, err)
	}
	sv, err := signature.LoadSignerVerifier(key, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("load the signing key %s: %w", path, err)
	}
	return sv, nil
}

// GenerateSigner makes an ephemeral ECDSA P-256 key, as cosign's own key pairs are.
func GenerateSigner() (signature.SignerVerifier, error) {
	sv, _, err := signature.NewECDSASignerVerifier(elliptic.P256(), rand.Reader, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("generate a signing key: %w", err)
	}
	return sv, nil
}

// PublicKeyPEM is the PEM ("PUBLIC KEY", PKIX) of sv's public key: what
// `cosign verify --key` takes.
func PublicKeyPEM(sv signature.PublicKeyProvider) ([]byte, error) {
	pub, err := sv.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	raw, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		return nil, fmt.Errorf("encode the public key: %w", err)
	}
	return raw, nil
}

// LoadVerifier reads a PEM public key (what PublicKeyPEM writes).
func LoadVerifier(pemBytes []byte) (signature.Verifier, error) {
	pub, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return nil, fmt.Errorf("parse the public key: %w", err)
	}
	v, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("load the public key: %w", err)
	}
	return v, nil
}
