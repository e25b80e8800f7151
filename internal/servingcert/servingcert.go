package servingcert

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The keys of the Secret, and the names of the files written.
const (
	// CAKey holds the CA certificate (PEM).
	CAKey = "ca.crt"
	// CertKey holds the serving certificate (PEM).
	CertKey = corev1.TLSCertKey
	// KeyKey holds the serving certificate's private key (PEM).
	KeyKey = corev1.TLSPrivateKeyKey
)

// renewBefore is how long before it expires a certificate is replaced.
const renewBefore = 30 * 24 * time.Hour

// Request says which certificate to keep where.
type Request struct {
	// Secret holds the CA and the serving certificate.
	Secret types.NamespacedName
	// Hosts are the DNS names and IP addresses the certificate must serve.
	Hosts []string
	// Dir receives tls.crt and tls.key.
	Dir string
}

// Ensure returns the CA (PEM) of a serving certificate for the hosts, and writes the
// certificate and key into req.Dir: the Secret's when it serves every host and is not
// about to expire, else a new one, which it stores in the Secret.
func Ensure(ctx context.Context, c client.Client, req Request) ([]byte, error) {
	if len(req.Hosts) == 0 {
		return nil, fmt.Errorf("serving certificate %s: no hosts to serve", req.Secret)
	}
	secret, err := current(ctx, c, req)
	if err != nil {
		return nil, err
	}
	if err := write(req.Dir, secret.Data); err != nil {
		return nil, err
	}
	return secret.Data[CAKey], nil
}

// current is the Secret holding a usable certificate: the one there, or one made now
// (another replica's, if it made one first).
func current(ctx context.Context, c client.Client, req Request) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	err := c.Get(ctx, req.Secret, secret)
	found := err == nil
	switch {
	case found && usable(secret.Data, req.Hosts, time.Now()):
		return secret, nil
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("read serving certificate %s: %w", req.Secret, err)
	}
	data, err := generate(req.Hosts, time.Now())
	if err != nil {
		return nil, err
	}
	if !found {
		secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: req.Secret.Namespace, Name: req.Secret.Name}, Type: corev1.SecretTypeTLS, Data: data}
		err = c.Create(ctx, secret)
	} else {
		secret.Data = data
		err = c.Update(ctx, secret)
	}
	if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
		return raced(ctx, c, req)
	}
	if err != nil {
		return nil, fmt.Errorf("store serving certificate %s: %w", req.Secret, err)
	}
	return secret, nil
}

// raced reads the certificate another replica stored while this one made its own.
func raced(ctx context.Context, c client.Client, req Request) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, req.Secret, secret); err != nil {
		return nil, fmt.Errorf("read serving certificate %s: %w", req.Secret, err)
	}
	if !usable(secret.Data, req.Hosts, time.Now()) {
		return nil, &UnusableError{Secret: req.Secret}
	}
	return secret, nil
}

// UnusableError says that the certificate another replica stored does not serve this
// one's hosts.
type UnusableError struct {
	// Secret holds the certificate.
	Secret types.NamespacedName
}

// Error names the Secret.
func (e *UnusableError) Error() string {
	return fmt.Sprintf("the serving certificate in %s, stored by another replica, does not serve this replica's hosts", e.Secret)
}

// usable reports whether data holds a CA, and a certificate and key it signed that serve
// every host and do not expire within renewBefore of now.
func usable(data map[string][]byte, hosts []string, now time.Time) bool {
	ca, cert := parse(data[CAKey]), parse(data[CertKey])
	if ca == nil || cert == nil || len(data[KeyKey]) == 0 || now.Add(renewBefore).After(cert.NotAfter) {
		return false
	}
	if cert.CheckSignatureFrom(ca) != nil {
		return false
	}
	return !slices.ContainsFunc(hosts, func(h string) bool { return cert.VerifyHostname(h) != nil })
}

// parse reads a PEM certificate; nil when there is none.
func parse(b []byte) *x509.Certificate {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil
	}
	return cert
}

// write writes the certificate and key into dir, leaving files that already say the
// same alone (the server reloads them when they change).
func write(dir string, data map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("serving certificate directory: %w", err)
	}
	for _, name := range []string{CertKey, KeyKey} {
		path := filepath.Join(dir, name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data[name]) {
			continue
		}
		if err := os.WriteFile(path, data[name], 0o600); err != nil {
			return fmt.Errorf("write serving certificate: %w", err)
		}
	}
	return nil
}

// isIP reports whether host is an IP address rather than a DNS name.
func isIP(host string) bool { return net.ParseIP(host) != nil }
