package cluster

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"
)

func testOptions(t *testing.T) Options {
	t.Helper()
	o, err := Options{Dir: t.TempDir()}.Defaults("/cache")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestPKI issues certificates that the API server, the kubelet and the clients can use:
// each chains to the CA for its purpose, servers for their names and addresses, clients
// with the identity RBAC and the Node authorizer expect.
func TestPKI(t *testing.T) {
	o := testOptions(t)
	if err := ensurePKI(o); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, o.pki("ca.crt")))
	for _, tc := range []struct {
		file  string
		usage x509.ExtKeyUsage
		names []string
		cn    string
		org   []string
	}{
		{file: "apiserver", usage: x509.ExtKeyUsageServerAuth, names: []string{"10.254.0.1", "10.254.128.1", "127.0.0.1", "kubernetes.default.svc"}, cn: "kube-apiserver"},
		{file: "kubelet-serving", usage: x509.ExtKeyUsageServerAuth, names: []string{"10.254.0.1", "terraplane-node"}, cn: "terraplane-node"},
		{file: "admin", usage: x509.ExtKeyUsageClientAuth, cn: "terraplane-admin", org: []string{"system:masters"}},
		{file: "kubelet", usage: x509.ExtKeyUsageClientAuth, cn: "system:node:terraplane-node", org: []string{"system:nodes"}},
		{file: "kube-proxy", usage: x509.ExtKeyUsageClientAuth, cn: "system:kube-proxy"},
		{file: "kube-controller-manager", usage: x509.ExtKeyUsageClientAuth, cn: "system:kube-controller-manager"},
		{file: "apiserver-kubelet-client", usage: x509.ExtKeyUsageClientAuth, cn: "kube-apiserver-kubelet-client", org: []string{"system:masters"}},
	} {
		c := readCert(t, o.pki(tc.file+".crt"))
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{tc.usage}}); err != nil {
			t.Errorf("%s: %v", tc.file, err)
		}
		for _, n := range tc.names {
			if err := c.VerifyHostname(n); err != nil {
				t.Errorf("%s: %v", tc.file, err)
			}
		}
		if c.Subject.CommonName != tc.cn || !cmp.Equal(c.Subject.Organization, tc.org, cmpEmpty) {
			t.Errorf("%s: subject %q %v, want %q %v", tc.file, c.Subject.CommonName, c.Subject.Organization, tc.cn, tc.org)
		}
	}
	if err := readCert(t, o.pki("apiserver.crt")).VerifyHostname("10.254.0.2"); err == nil {
		t.Error("the API server's certificate is valid for an address it does not serve")
	}
}

var cmpEmpty = cmp.Comparer(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })

// TestPKIKeptOrRemade keeps the certificates while the addresses stay, remakes them when
// the node address changes, and writes kubeconfigs that point at the API server.
func TestPKIKeptOrRemade(t *testing.T) {
	o := testOptions(t)
	if err := ensurePKI(o); err != nil {
		t.Fatal(err)
	}
	first := readCert(t, o.pki("ca.crt"))
	if err := ensurePKI(o); err != nil {
		t.Fatal(err)
	}
	if !readCert(t, o.pki("ca.crt")).Equal(first) {
		t.Error("a second start with the same addresses made a new CA")
	}
	o.NodeIP = "10.254.0.9"
	if err := ensurePKI(o); err != nil {
		t.Fatal(err)
	}
	if readCert(t, o.pki("ca.crt")).Equal(first) {
		t.Error("a new node address kept the old certificates")
	}
	if err := readCert(t, o.pki("apiserver.crt")).VerifyHostname("10.254.0.9"); err != nil {
		t.Error(err)
	}
	cfg, err := clientcmd.LoadFromFile(o.kubeconfig("kubelet"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server; got != "https://10.254.0.9:6443" {
		t.Errorf("kubelet kubeconfig server %q", got)
	}
	if _, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig()); err != nil {
		t.Errorf("admin kubeconfig: %v", err)
	}
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(raw)
	if b == nil {
		t.Fatalf("%s holds no PEM", path)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
