package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/render"
)

func renderEcho(t *testing.T, text string) map[string][]byte {
	t.Helper()
	m, err := module.Load(os.DirFS("testdata"), "echo")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := render.Render(render.Input{Module: m, Values: map[string]any{"text": text}})
	if err != nil {
		t.Fatal(err)
	}
	return ws.Files
}

func newEngine(t *testing.T) *Engine {
	t.Helper()
	if testing.Short() {
		t.Skip("runs terraform")
	}
	e, err := New(context.Background(), Options{WorkDir: t.TempDir(), PluginMirror: t.TempDir()})
	if err != nil {
		t.Fatalf("%v (terraform ships with the machine image; `make tools` checks for it)", err)
	}
	return e
}

// TestApplyLifecycle runs the real terraform: inputs stay literal, init runs once for an
// unchanged configuration, an empty plan applies nothing, and secrets pass through the
// environment only.
func TestApplyLifecycle(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	literal := `${file("/etc/hostname")}`
	ws := Workspace{ID: "w1", Files: renderEcho(t, literal), Env: map[string]string{"TERRAPLANE_TEST_TOKEN": "s3cr3t-token"}}

	res, err := e.Apply(ctx, ws, ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	_ = json.Unmarshal(res.Outputs["text"].Value, &got)
	if got != literal {
		t.Errorf("text output = %q, want the literal %q", got, literal)
	}
	if !res.Outputs["token"].Sensitive {
		t.Error("token output should be sensitive")
	}
	for _, f := range []string{"main.tf.json", "terraform.tfvars.json"} {
		b, _ := os.ReadFile(filepath.Join(e.Dir("w1"), f))
		if contains(b, "s3cr3t-token") {
			t.Errorf("%s holds the secret", f)
		}
	}

	before := e.Processes()
	res, err = e.Apply(ctx, ws, ApplyOptions{PlanFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed || e.Processes()-before != 1 {
		t.Errorf("unchanged workspace: changed=%v, %d processes; want no change and only a plan", res.Changed, e.Processes()-before)
	}

	before = e.Processes()
	ws.Files = renderEcho(t, "two")
	res, err = e.Apply(ctx, ws, ApplyOptions{PlanFirst: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || e.Processes()-before != 3 {
		t.Errorf("changed input: changed=%v, %d processes; want plan, apply, output and no init", res.Changed, e.Processes()-before)
	}
	if _, err := os.Stat(filepath.Join(e.Dir("w1"), planFile)); !os.IsNotExist(err) {
		t.Errorf("the saved plan (it holds every variable's value) outlived the apply: %v", err)
	}
	if err := e.Destroy(ctx, ws); err != nil {
		t.Fatal(err)
	}
}

func TestErrorsAreRedacted(t *testing.T) {
	e := newEngine(t)
	ws := Workspace{ID: "bad", Files: map[string][]byte{"main.tf": []byte(`resource "nope" "x" {}` + "\n# s3cr3t-value\n")},
		Env: map[string]string{"TERRAPLANE_TEST_VALUE": "s3cr3t-value"}}
	_, err := e.Apply(context.Background(), ws, ApplyOptions{})
	if err == nil {
		t.Fatal("want an error")
	}
	var r *RedactedError
	if !errors.As(err, &r) {
		t.Errorf("error is not redacted: %T", err)
	}
	if contains([]byte(err.Error()), "s3cr3t-value") {
		t.Errorf("error leaks the secret: %v", err)
	}
}

func TestRedactString(t *testing.T) {
	got := RedactString("login as admin with hunter22 and hunter2", map[string]string{"a": "hunter2", "b": "hunter22", "c": "ab"})
	if want := "login as admin with (redacted) and (redacted)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

// TestCreateWithoutSensitiveOutputsTakesTwoProcesses: apply -json reports every output, so
// creating a workspace whose outputs are all non-sensitive runs only init and apply; a
// wrapper around the binary counts every process, terraform-exec's own included.
func TestCreateWithoutSensitiveOutputsTakesTwoProcesses(t *testing.T) {
	e, calls := countingEngine(t, 10)
	res, err := e.Apply(context.Background(), Workspace{ID: "plain", Files: renderData(t, "n1")}, ApplyOptions{Outputs: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := calls(); strings.Join(got, " ") != "init/GOGC=400 apply/GOGC=" || e.Processes() != 2 {
		t.Errorf("terraform ran %v (%d counted), want init (with its GC target) and apply (with Go's default) only", got, e.Processes())
	}
	if string(res.Outputs["id"].Value) != `"n1"` {
		t.Errorf("outputs = %v", res.Outputs)
	}
}

// TestOneSlotPerVerb: a workspace keeps its slot from init to apply, so with one slot two
// creates run init, apply, init, apply, never init, init, apply, apply.
func TestOneSlotPerVerb(t *testing.T) {
	e, calls := countingEngine(t, 1)
	errs := make(chan error, 2)
	for _, id := range []string{"a", "b"} {
		go func() {
			_, err := e.Apply(context.Background(), Workspace{ID: id, Files: renderData(t, id)}, ApplyOptions{})
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(calls(), " "); got != "init/GOGC=400 apply/GOGC= init/GOGC=400 apply/GOGC=" {
		t.Errorf("terraform ran %s, want each workspace's init and apply back to back", got)
	}
}

// countingEngine is an engine with slots terraform slots whose binary is a wrapper that
// logs every process it starts, terraform-exec's own included, as command/GOGC=value;
// calls returns the log.
func countingEngine(t *testing.T, slots int) (e *Engine, calls func() []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs terraform")
	}
	real, err := FindTerraform("")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	wrapper := filepath.Join(dir, "terraform")
	script := "#!/bin/sh\necho \"$1/GOGC=$GOGC\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e, err = New(context.Background(), Options{WorkDir: t.TempDir(), PluginMirror: t.TempDir(), TerraformPath: wrapper, MaxConcurrent: slots})
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(log) // finding and asking the binary at start-up is not per workspace
	return e, func() []string {
		b, _ := os.ReadFile(log)
		return strings.Fields(string(b))
	}
}

// renderData renders a module with one terraform_data resource and no sensitive outputs.
func renderData(t *testing.T, name string) map[string][]byte {
	t.Helper()
	m, err := module.FromFiles(map[string][]byte{"main.tf": []byte(`
variable "name" { type = string }
resource "terraform_data" "this" { input = var.name }
output "id" { value = terraform_data.this.output }
`)})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := render.Render(render.Input{Module: m, Values: map[string]any{"name": name}})
	if err != nil {
		t.Fatal(err)
	}
	return ws.Files
}

func TestGroupCap(t *testing.T) {
	e := &Engine{opts: Options{MaxConcurrentPerGroup: 1}, slots: make(chan struct{}, 4)}
	ctx := context.Background()
	release, err := e.acquire(ctx, "aws/minio")
	if err != nil {
		t.Fatal(err)
	}
	if other, err := e.acquire(ctx, "postgresql/pg"); err != nil {
		t.Fatal("another group must not wait:", err)
	} else {
		other()
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := e.acquire(short, "aws/minio"); err == nil {
		t.Fatal("a second run of a capped group must wait")
	}
	release()
	again, err := e.acquire(ctx, "aws/minio")
	if err != nil {
		t.Fatal(err)
	}
	again()
	if len(e.slots) != 0 {
		t.Errorf("%d global slots leaked", len(e.slots))
	}
}
