package runner

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// Keys of a runner's credentials Secret.
const (
	// TokenKey holds the bearer token the controller presents to the runner.
	TokenKey = "token"
	// CertKey holds the runner's serving certificate, which the controller pins.
	CertKey = "tls.crt"
	// KeyKey holds the runner's private key.
	KeyKey = "tls.key"
)

// certLifetime is how long a runner's certificate is valid; a Secret whose certificate
// has less than certRenewal left is made again (and the runner restarted with it).
const (
	certLifetime = 2 * 365 * 24 * time.Hour
	certRenewal  = 30 * 24 * time.Hour
)

// NewCredentials makes what a runner serving on the DNS names hosts needs: a random
// token and a self-signed ECDSA certificate for those names, as a Secret's data.
func NewCredentials(hosts []string, now time.Time) (map[string][]byte, error) {
	token := make([]byte, 32)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("runner key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: hosts[0]}, DNSNames: hosts,
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(certLifetime),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("runner certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		TokenKey: []byte(hex.EncodeToString(token)),
		CertKey:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyKey:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// usable reports whether data holds a token and a certificate for hosts that is valid
// for longer than certRenewal from now.
func usable(data map[string][]byte, hosts []string, now time.Time) bool {
	if len(data[TokenKey]) == 0 || len(data[KeyKey]) == 0 {
		return false
	}
	block, _ := pem.Decode(data[CertKey])
	if block == nil {
		return false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil || now.Add(certRenewal).After(cert.NotAfter) {
		return false
	}
	for _, h := range hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}
