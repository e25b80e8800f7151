package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// cert is a certificate the cluster needs: a client's (Organization, CommonName) or a
// server's (IPs, DNSNames).
type cert struct {
	name         string
	commonName   string
	organization []string
	ips          []string
	dnsNames     []string
	server       bool
}

// clients are the identities that get a kubeconfig, by file name.
func (o Options) clients() []cert {
	return []cert{
		{name: "admin", commonName: "terraplane-admin", organization: []string{"system:masters"}},
		{name: "kube-controller-manager", commonName: "system:kube-controller-manager"},
		{name: "kube-scheduler", commonName: "system:kube-scheduler"},
		{name: "kubelet", commonName: "system:node:" + o.NodeName, organization: []string{"system:nodes"}},
		{name: "kube-proxy", commonName: "system:kube-proxy"},
	}
}

// certs are every certificate signed by the cluster's CA.
func (o Options) certs() []cert {
	return append(o.clients(),
		cert{name: "apiserver", commonName: "kube-apiserver", server: true, ips: []string{o.NodeIP, "127.0.0.1", o.serviceIP()},
			dnsNames: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"}},
		cert{name: "kubelet-serving", commonName: o.NodeName, server: true, ips: []string{o.NodeIP}, dnsNames: []string{o.NodeName}},
		cert{name: "apiserver-kubelet-client", commonName: "kube-apiserver-kubelet-client", organization: []string{"system:masters"}},
	)
}

// pki returns the path of a file of the PKI directory.
func (o Options) pki(file string) string { return o.path("pki", file) }

// ensurePKI makes the CA, the certificates and the service-account key unless they were
// made for the same addresses, and the components' kubeconfigs.
func ensurePKI(o Options) error {
	stamp := fmt.Sprintf("%s %s %s %d\n", o.NodeIP, o.NodeName, o.ServiceCIDR, o.APIPort)
	if old, err := os.ReadFile(o.pki("options")); err != nil || string(old) != stamp {
		if err := os.RemoveAll(o.path("pki")); err != nil {
			return err
		}
		if err := makePKI(o); err != nil {
			return fmt.Errorf("make certificates: %w", err)
		}
		if err := os.WriteFile(o.pki("options"), []byte(stamp), 0o600); err != nil {
			return err
		}
	}
	return writeKubeconfigs(o)
}

func makePKI(o Options) error {
	if err := os.MkdirAll(o.path("pki"), 0o700); err != nil {
		return err
	}
	ca, caKey, err := selfSigned("terraplane-cluster-ca")
	if err != nil {
		return err
	}
	if err := writePair(o.pki("ca"), ca.Raw, caKey); err != nil {
		return err
	}
	for _, c := range o.certs() {
		der, key, err := issue(c, ca, caKey)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if err := writePair(o.pki(c.name), der, key); err != nil {
			return err
		}
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return err
	}
	if err := writeKey(o.pki("sa.key"), sa); err != nil {
		return err
	}
	return os.WriteFile(o.pki("sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}

func selfSigned(cn string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	return ca, key, err
}

// issue signs c with the CA for ten years.
func issue(c cert, ca *x509.Certificate, caKey *ecdsa.PrivateKey) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: c.commonName, Organization: c.organization},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, DNSNames: c.dnsNames}
	if c.server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	for _, ip := range c.ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	return der, key, err
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// writePair writes base.crt and base.key.
func writePair(base string, der []byte, key *ecdsa.PrivateKey) error {
	if err := os.WriteFile(base+".crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return err
	}
	return writeKey(base+".key", key)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// kubeconfig is the path of a client's kubeconfig; the admin's is Options.Kubeconfig.
func (o Options) kubeconfig(client string) string {
	if client == "admin" {
		return o.Kubeconfig()
	}
	return o.path("kubeconfigs", client+".kubeconfig")
}

// writeKubeconfigs writes a kubeconfig with embedded certificates for every client.
func writeKubeconfigs(o Options) error {
	if err := os.MkdirAll(o.path("kubeconfigs"), 0o700); err != nil {
		return err
	}
	ca, err := os.ReadFile(o.pki("ca.crt"))
	if err != nil {
		return err
	}
	for _, c := range o.clients() {
		crt, err1 := os.ReadFile(o.pki(c.name + ".crt"))
		key, err2 := os.ReadFile(o.pki(c.name + ".key"))
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["terraplane"] = &clientcmdapi.Cluster{Server: o.APIServer(), CertificateAuthorityData: ca}
		cfg.AuthInfos[c.commonName] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
		cfg.Contexts["terraplane"] = &clientcmdapi.Context{Cluster: "terraplane", AuthInfo: c.commonName}
		cfg.CurrentContext = "terraplane"
		if err := os.MkdirAll(filepath.Dir(o.kubeconfig(c.name)), 0o700); err != nil {
			return err
		}
		if err := clientcmd.WriteToFile(*cfg, o.kubeconfig(c.name)); err != nil {
			return fmt.Errorf("write %s kubeconfig: %w", c.name, err)
		}
	}
	return nil
}
