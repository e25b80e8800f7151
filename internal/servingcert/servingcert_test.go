package servingcert

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestGenerate: a generated certificate serves its hosts (names and addresses), is
// signed by its CA, pairs with its key, and is replaced for other hosts or near its end.
func TestGenerate(t *testing.T) {
	now := time.Now()
	hosts := []string{"terraplane-webhook.terraplane-system.svc", "127.0.0.1"}
	data, err := generate(hosts, now)
	if err != nil {
		t.Fatal(err)
	}
	if !usable(data, hosts, now) {
		t.Error("a new certificate is not usable")
	}
	if usable(data, []string{"other.example.com"}, now) {
		t.Error("a certificate is usable for a host it does not serve")
	}
	if usable(data, hosts, now.Add(validity-renewBefore/2)) {
		t.Error("a certificate about to expire is usable")
	}
	other, _ := generate(hosts, now)
	if usable(map[string][]byte{CAKey: other[CAKey], CertKey: data[CertKey], KeyKey: data[KeyKey]}, hosts, now) {
		t.Error("a certificate another CA signed is usable")
	}
	dir := t.TempDir()
	if err := write(dir, data); err != nil {
		t.Fatal(err)
	}
	if _, err := tls.LoadX509KeyPair(filepath.Join(dir, CertKey), filepath.Join(dir, KeyKey)); err != nil {
		t.Errorf("the written pair does not load: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, KeyKey)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, %v", fi, err)
	}
}
