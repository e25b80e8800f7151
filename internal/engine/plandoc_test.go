package engine

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/render"
)

// TestPlanDocumentRedacts: the document a plan keeps for plan policies is terraform's
// resource changes, with a sensitive value masked on both sides of the change.
func TestPlanDocumentRedacts(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	files := func(token string) map[string][]byte {
		m, err := module.Load(os.DirFS("testdata"), "secretinput")
		if err != nil {
			t.Fatal(err)
		}
		ws, err := render.Render(render.Input{Module: m, Values: map[string]any{"token": token}})
		if err != nil {
			t.Fatal(err)
		}
		return ws.Files
	}
	ws := Workspace{ID: "doc1", Files: files("first-secret")}
	if _, err := e.Create(ctx, ws); err != nil {
		t.Fatal(err)
	}
	ws.Files = files("second-secret")
	p, err := e.Plan(ctx, ws, PlanOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Actions []string       `json:"actions"`
				Before  map[string]any `json:"before"`
				After   map[string]any `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(p.Document, &doc); err != nil {
		t.Fatalf("document %s: %v", p.Document, err)
	}
	if len(doc.ResourceChanges) != 1 || !strings.HasSuffix(doc.ResourceChanges[0].Address, "terraform_data.this") {
		t.Fatalf("document %s, want the one resource change", p.Document)
	}
	for _, s := range []string{"first-secret", "second-secret"} {
		if strings.Contains(string(p.Document), s) {
			t.Errorf("the document shows %s:\n%s", s, p.Document)
		}
	}
	if !strings.Contains(string(p.Document), `"(sensitive value)"`) {
		t.Errorf("the document masks nothing:\n%s", p.Document)
	}
}
