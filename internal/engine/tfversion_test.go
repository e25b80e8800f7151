package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-version"
)

// TestHandlePool: a workspace gets its idle handle back (so terraform-exec's remembered
// version is reused), two verbs at once never share one, and a removed workspace starts
// afresh.
func TestHandlePool(t *testing.T) {
	var p handlePool
	dir := t.TempDir()
	first, err := p.take("ws", dir, "/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	concurrent, err := p.take("ws", dir, "/bin/true")
	if err != nil || concurrent == first {
		t.Fatalf("a second verb at once got the same handle (err %v)", err)
	}
	p.put("ws", first)
	if again, _ := p.take("ws", dir, "/bin/true"); again != first {
		t.Error("the idle handle was not reused")
	}
	p.put("ws", first)
	p.forget("ws")
	if fresh, _ := p.take("ws", dir, "/bin/true"); fresh == first {
		t.Error("a forgotten workspace got its old handle")
	}
}

// TestHandlesKnowTheVersion: a new handle is given the version the engine read at start,
// so terraform-exec runs no `terraform version` before the workspace's first command.
func TestHandlesKnowTheVersion(t *testing.T) {
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	binary := filepath.Join(dir, "terraform")
	if err := os.WriteFile(binary, []byte("#!/bin/sh\necho \"$@\" >> "+ran+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	known := version.Must(version.NewVersion("1.11.4"))

	p := handlePool{known: known}
	tf, err := p.take("ws", dir, binary)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := tf.Version(context.Background(), false)
	if err != nil || !got.Equal(known) {
		t.Fatalf("version = %v, %v; want %s without running the binary", got, err, known)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Fatalf("the binary ran: %s", b)
	}

	// Without a known version the handle asks the binary, which fails here.
	var unknown handlePool
	tf, err = unknown.take("ws", dir, binary)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tf.Version(context.Background(), false); err == nil {
		t.Fatal("a handle without a known version did not ask the binary")
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatalf("the binary did not run: %v", err)
	}
}
