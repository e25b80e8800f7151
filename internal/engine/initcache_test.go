package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"terraplane.io/terraplane/internal/render"
)

// TestInitSharedPerModule runs the real terraform: the second workspace of a module
// copies the first one's init (no init process) and keeps its state where its own
// backend settings say; a copy terraform refuses makes the next run initialise for real.
func TestInitSharedPerModule(t *testing.T) {
	e, calls := countingEngine(t, 10)
	ctx := context.Background()
	states := t.TempDir()
	ws := func(id string) Workspace {
		return Workspace{ID: id, Files: renderLocalBackend(t, id),
			BackendConfig: map[string]string{"path": filepath.Join(states, id+".tfstate")}}
	}
	for _, id := range []string{"a", "b"} {
		if _, err := e.Create(ctx, ws(id)); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(calls(), " "); got != "init/GOGC=400 apply/GOGC= apply/GOGC=" {
		t.Errorf("terraform ran %s, want init for the first workspace of the module only", got)
	}
	if e.InitsShared() != 1 {
		t.Errorf("InitsShared = %d, want 1", e.InitsShared())
	}
	for _, id := range []string{"a", "b"} {
		b, err := os.ReadFile(filepath.Join(states, id+".tfstate"))
		if err != nil || !strings.Contains(string(b), `"value": "`+id+`"`) {
			t.Errorf("state of %s: %v\n%s", id, err, b)
		}
		plan, err := e.Plan(ctx, ws(id), PlanOptions{})
		if err != nil || plan.HasChanges() {
			t.Errorf("plan of %s after its create: %v, changes %v; want none", id, err, plan)
		}
	}

	// A copy whose backend record no longer fits the files: the run fails asking for an
	// init, and the next one runs it.
	c := ws("c")
	if _, err := e.Create(ctx, c); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(e.Dir("c"), dataDir, backendStateFile)
	b, _ := os.ReadFile(record)
	var doc map[string]any
	_ = json.Unmarshal(b, &doc)
	doc["backend"].(map[string]any)["hash"] = 1
	b, _ = json.Marshal(doc)
	_ = os.WriteFile(record, b, 0o600)
	if _, err := e.Plan(ctx, c, PlanOptions{}); err == nil || !initRequired.MatchString(err.Error()) {
		t.Fatalf("plan with a broken backend record: %v, want terraform asking for init", err)
	}
	before := len(calls())
	if plan, err := e.Plan(ctx, c, PlanOptions{}); err != nil || plan.HasChanges() {
		t.Fatalf("plan after the refused copy: %v, %v", err, plan)
	}
	if got := strings.Join(calls()[before:], " "); got != "init/GOGC=400 plan/GOGC=" {
		t.Errorf("after the refused copy terraform ran %s, want init, then the plan", got)
	}
}

// TestWithBackendConfig: a workspace's settings replace the cached ones, the record's
// hash survives exactly, and a setting the record lacks is refused.
func TestWithBackendConfig(t *testing.T) {
	record := []byte(`{"version":3,"backend":{"type":"kubernetes","config":{"namespace":"a","secret_suffix":"x","host":null},"hash":18446744073709551000}}`)
	out, err := withBackendConfig(record, map[string]string{"namespace": "b", "secret_suffix": "y"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"namespace": "b"`, `"secret_suffix": "y"`, `"hash": 18446744073709551000`, `"host": null`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("record lacks %s:\n%s", want, out)
		}
	}
	if _, err := withBackendConfig(record, map[string]string{"path": "p"}); err == nil {
		t.Error("a setting the record lacks was accepted")
	}
	if _, err := withBackendConfig(nil, map[string]string{"path": "p"}); err == nil {
		t.Error("backend settings for a module without a backend were accepted")
	}
}

// renderLocalBackend renders renderData's module with an empty local backend block, the
// state's path left to BackendConfig.
func renderLocalBackend(t *testing.T, name string) map[string][]byte {
	return renderDataWith(t, name, render.Backend{Type: "local", Config: map[string]any{}})
}
