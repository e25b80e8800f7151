package plugins

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseHandshake(t *testing.T) {
	cases := []struct {
		line, network, addr string
		protocol            int
		err                 string
	}{
		{line: "1|6|unix|/tmp/plugin123|grpc\n", network: "unix", addr: "/tmp/plugin123", protocol: 6},
		{line: "1|5|tcp|127.0.0.1:1234|grpc|", network: "tcp", addr: "127.0.0.1:1234", protocol: 5},
		{line: "2|6|unix|/tmp/p|grpc", err: "unexpected plugin handshake"},
		{line: "1|6|unix|/tmp/p|netrpc", err: "unexpected plugin handshake"},
		{line: "1|six|unix|/tmp/p|grpc", err: "unexpected plugin protocol"},
		{line: "", err: "unexpected plugin handshake"},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			network, addr, protocol, err := parseHandshake(tc.line)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{tc.network, tc.addr, tc.protocol}, []any{network, addr, protocol}); diff != "" {
				t.Errorf("handshake (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHandshakeEnds: a plugin that writes no handshake, exits before serving, or never
// speaks ends the wait with an error.
func TestHandshakeEnds(t *testing.T) {
	exited := make(chan struct{})
	close(exited)
	silent := func() io.Reader {
		r, w := io.Pipe()
		t.Cleanup(func() { w.Close() })
		return r
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	cases := []struct {
		name   string
		ctx    context.Context
		stdout io.Reader
		exited chan struct{}
		err    string
	}{
		{"no handshake", context.Background(), strings.NewReader(""), make(chan struct{}), "unexpected plugin handshake"},
		{"exited before serving", context.Background(), silent(), exited, "exited before serving"},
		{"never speaks", short, silent(), make(chan struct{}), "did not start serving"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, _, err := handshake(tc.ctx, tc.stdout, tc.exited); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("handshake: %v, want %q", err, tc.err)
			}
		})
	}
}

// TestStartFailures: a binary that cannot run, or exits before serving, is not started.
func TestStartFailures(t *testing.T) {
	dir := t.TempDir()
	exits := filepath.Join(dir, "terraform-provider-exits")
	if err := os.WriteFile(exits, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ binary, err string }{
		{filepath.Join(dir, "missing"), "start provider"},
		{exits, "provider example.com/x/y: "}, // its output ends, or it exits: either way, not serving
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.binary), func(t *testing.T) {
			h, err := execStarter{cache: &answers{}}.Start(Launch{Provider: Provider{Address: "example.com/x/y", Binary: tc.binary}, Socket: filepath.Join(dir, "p.sock")})
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "example.com/x/y") {
				t.Errorf("Start: %v, %v; want an error naming the provider and %q", h, err, tc.err)
			}
		})
	}
}
