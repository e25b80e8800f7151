package servingcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// validity is how long a CA and a serving certificate are valid.
const validity = 10 * 365 * 24 * time.Hour

// Generate makes a CA and a serving certificate for hosts that it signs, valid ten
// years, and returns the CA, the certificate and its key as PEM.
func Generate(hosts []string) (ca, cert, key []byte, err error) {
	data, err := generate(hosts, time.Now())
	if err != nil {
		return nil, nil, nil, err
	}
	return data[CAKey], data[CertKey], data[KeyKey], nil
}

// generate makes a CA and a serving certificate for hosts that it signs, as the data of
// a Secret (CAKey, CertKey, KeyKey).
func generate(hosts []string, now time.Time) (map[string][]byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	caTmpl := template("terraplane-webhook-ca", now)
	caTmpl.IsCA, caTmpl.BasicConstraintsValid = true, true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate serving key: %w", err)
	}
	tmpl := template(hosts[0], now)
	tmpl.KeyUsage, tmpl.ExtKeyUsage = x509.KeyUsageDigitalSignature, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	for _, h := range hosts {
		if isIP(h) {
			tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(h))
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caTmpl, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode serving key: %w", err)
	}
	return map[string][]byte{
		CAKey:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		CertKey: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// template is a certificate's template: a random serial, valid from an hour ago.
func template(cn string, now time.Time) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"terraplane"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
	}
}
