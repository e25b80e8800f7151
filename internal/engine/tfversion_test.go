package engine

import (
	"testing"
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
