package main

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"terraplane.io/terraplane/internal/runner"
)

// TestRunnerListener: a runner in a pod serves TLS with the certificate it is given, which
// a client pinning that certificate accepts; its token comes from --token-file.
func TestRunnerListener(t *testing.T) {
	dir := t.TempDir()
	creds, err := runner.NewCredentials([]string{"localhost"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for key, value := range creds {
		files[key] = filepath.Join(dir, key)
		if err := os.WriteFile(files[key], append(value, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	o := runnerOptions{listen: "127.0.0.1:0", certFile: files[runner.CertKey], keyFile: files[runner.KeyKey], tokenFile: files[runner.TokenKey]}
	token, err := runnerToken(o)
	if err != nil || token != string(creds[runner.TokenKey]) {
		t.Fatalf("token %q, %v; want the file's, trimmed", token, err)
	}
	lis, err := runnerListener(o)
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			_ = c.Close()
		}
	}()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(creds[runner.CertKey])
	addr := strings.Replace(lis.Addr().String(), "127.0.0.1", "localhost", 1)
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatalf("a client pinning the runner's certificate: %v", err)
	}
	_ = conn.Close()
	if _, err := tls.Dial("tcp", addr, &tls.Config{MinVersion: tls.VersionTLS13}); err == nil {
		t.Error("a client that does not trust the runner's certificate connected")
	}
	if _, err := runnerToken(runnerOptions{tokenFile: filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing token file was accepted")
	}
}
