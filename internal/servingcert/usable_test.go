package servingcert

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestUsableRefusesIncomplete: a Secret missing its CA, its certificate or its key, or
// holding something that is not a PEM certificate, is not usable.
func TestUsableRefusesIncomplete(t *testing.T) {
	hosts := []string{"hook.svc"}
	data, err := generate(hosts, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(map[string][]byte){
		"no CA":                 func(d map[string][]byte) { delete(d, CAKey) },
		"no certificate":        func(d map[string][]byte) { delete(d, CertKey) },
		"no key":                func(d map[string][]byte) { d[KeyKey] = nil },
		"CA not PEM":            func(d map[string][]byte) { d[CAKey] = []byte("junk") },
		"certificate corrupted": func(d map[string][]byte) { d[CertKey] = bytes.Replace(d[CertKey], []byte("MII"), []byte("XII"), 1) },
		"the CA as certificate": func(d map[string][]byte) { d[CertKey] = d[CAKey] },
	} {
		t.Run(name, func(t *testing.T) {
			d := map[string][]byte{}
			for k, v := range data {
				d[k] = v
			}
			edit(d)
			if usable(d, hosts, time.Now()) {
				t.Error("usable")
			}
		})
	}
}

// TestGenerateNames: the serving certificate is named after the first host, lists names
// as DNS names and addresses as IP addresses, and is no CA; its CA is one.
func TestGenerateNames(t *testing.T) {
	data, err := generate([]string{"hook.ns.svc", "10.0.0.7", "::1", "hook.ns.svc.cluster.local"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cert, ca := parse(data[CertKey]), parse(data[CAKey])
	if cert.Subject.CommonName != "hook.ns.svc" || cert.IsCA || !ca.IsCA {
		t.Errorf("certificate %q (CA %v), CA certificate CA %v", cert.Subject.CommonName, cert.IsCA, ca.IsCA)
	}
	if d := cmp.Diff([]string{"hook.ns.svc", "hook.ns.svc.cluster.local"}, cert.DNSNames); d != "" {
		t.Errorf("DNS names (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"10.0.0.7", "::1"}, ipStrings(cert.IPAddresses)); d != "" {
		t.Errorf("IP addresses (-want +got):\n%s", d)
	}
}

func ipStrings(ips []net.IP) []string {
	var out []string
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}

// TestWriteLeavesSameFilesAlone: files that already hold the certificate are not
// rewritten (the server would reload them); changed ones are; a directory that cannot
// be made is an error.
func TestWriteLeavesSameFilesAlone(t *testing.T) {
	dir := t.TempDir()
	data := map[string][]byte{CertKey: []byte("cert"), KeyKey: []byte("key")}
	if err := write(dir, data); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, n := range []string{CertKey, KeyKey} {
		if err := os.Chtimes(filepath.Join(dir, n), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := write(dir, map[string][]byte{CertKey: []byte("cert"), KeyKey: []byte("new key")}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, CertKey)); !fi.ModTime().Equal(old) {
		t.Error("an unchanged certificate file was rewritten")
	}
	if raw, _ := os.ReadFile(filepath.Join(dir, KeyKey)); string(raw) != "new key" {
		t.Errorf("the changed key file holds %q", raw)
	}
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := write(filepath.Join(blocker, "certs"), data); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("write under a file = %v, want an error about the directory", err)
	}
}

// TestEnsureRenews: a stored certificate near its end is replaced in the Secret and in
// the files; a conflict on that update takes what the other replica stored.
func TestEnsureRenews(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "ns", Name: "cert"}
	hosts := []string{"hook.ns.svc"}
	expiring, err := generate(hosts, time.Now().Add(-validity+renewBefore/2))
	if err != nil {
		t.Fatal(err)
	}
	stored := func() *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Type: corev1.SecretTypeTLS, Data: expiring}
	}
	dir := t.TempDir()
	c := fake.NewClientBuilder().WithObjects(stored()).Build()
	ca, err := Ensure(ctx, c, Request{Secret: key, Hosts: hosts, Dir: dir})
	if err != nil || bytes.Equal(ca, expiring[CAKey]) {
		t.Fatalf("Ensure of an expiring certificate = %v; the old CA kept: %v", err, bytes.Equal(ca, expiring[CAKey]))
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil || !bytes.Equal(secret.Data[CAKey], ca) {
		t.Errorf("the Secret does not hold the new CA (%v)", err)
	}
	if raw, _ := os.ReadFile(filepath.Join(dir, CertKey)); !bytes.Equal(raw, secret.Data[CertKey]) {
		t.Error("the file does not hold the new certificate")
	}

	theirs, err := generate(hosts, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	conflicting := fake.NewClientBuilder().WithObjects(stored()).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			s := stored()
			s.Data = theirs
			if err := c.Update(ctx, s); err != nil {
				return err
			}
			return apierrors.NewConflict(schema.GroupResource{Resource: "secrets"}, key.Name, errors.New("changed"))
		}}).Build()
	ca, err = Ensure(ctx, conflicting, Request{Secret: key, Hosts: hosts, Dir: t.TempDir()})
	if err != nil || !bytes.Equal(ca, theirs[CAKey]) {
		t.Errorf("a conflicting renewal took %v; want the other replica's CA", err)
	}
}

// TestEnsureErrors: a Secret that cannot be read or stored is an error naming it.
func TestEnsureErrors(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Namespace: "ns", Name: "cert"}
	denied := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, key.Name, errors.New("no"))
	for name, funcs := range map[string]interceptor.Funcs{
		"read": {Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return denied
		}},
		"store": {Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return denied }},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithInterceptorFuncs(funcs).Build()
			_, err := Ensure(ctx, c, Request{Secret: key, Hosts: []string{"h"}, Dir: t.TempDir()})
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), name+" serving certificate ns/cert") {
				t.Errorf("Ensure = %v, want the %s error naming the Secret", err, name)
			}
		})
	}
}
