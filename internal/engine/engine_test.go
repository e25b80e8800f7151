package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
// unchanged configuration, an empty plan applies nothing, a saved plan is applied exactly
// and removed, and secrets pass through the environment only.
func TestApplyLifecycle(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	literal := `${file("/etc/hostname")}`
	ws := Workspace{ID: "w1", Files: renderEcho(t, literal), Env: map[string]string{"TERRAPLANE_TEST_TOKEN": "s3cr3t-token"}}

	res, err := e.Create(ctx, ws)
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
	if c := CountChanges(res.Changes); c.Add != 1 || res.Resources != 1 {
		t.Errorf("create: %v, %d resources; want one add and one resource", c, res.Resources)
	}
	for _, f := range []string{"main.tf.json", "terraform.tfvars.json"} {
		b, _ := os.ReadFile(filepath.Join(e.Dir("w1"), f))
		if contains(b, "s3cr3t-token") {
			t.Errorf("%s holds the secret", f)
		}
	}

	before := e.Processes()
	plan, err := e.Plan(ctx, ws, PlanOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	if plan.HasChanges() || plan.ID != "" || e.Processes()-before != 1 {
		t.Errorf("unchanged workspace: changes=%v id=%q, %d processes; want no change and only a plan", plan.Changes, plan.ID, e.Processes()-before)
	}

	before = e.Processes()
	ws.Files = renderEcho(t, "two")
	plan, err = e.Plan(ctx, ws, PlanOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.HasChanges() || len(plan.ID) != 16 || len(plan.File) == 0 || e.Processes()-before != 2 {
		t.Errorf("changed input: changes=%v id=%q, %d processes; want a saved plan from plan and show", plan.Changes, plan.ID, e.Processes()-before)
	}
	if c := CountChanges(plan.Changes); c.Change != 1 || len(plan.Destructive()) != 0 {
		t.Errorf("changing terraform_data's input updates it in place; got %v", c)
	}
	if !strings.Contains(plan.Text, `~ input  = "${file(\"/etc/hostname\")}" -> "two"`) {
		t.Errorf("plan text does not show the change as terraform does:\n%s", plan.Text)
	}
	if _, err := os.Stat(filepath.Join(e.Dir("w1"), planFile)); !os.IsNotExist(err) {
		t.Errorf("the saved plan (it holds every variable's value) outlived the plan: %v", err)
	}
	again, err := e.Plan(ctx, ws, PlanOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != plan.ID {
		t.Errorf("the same change planned twice got ids %s and %s", plan.ID, again.ID)
	}
	before = e.Processes()
	res, err = e.ApplyPlan(ctx, ws, plan)
	if err != nil {
		t.Fatal(err)
	}
	if c := CountChanges(res.Changes); c.Change != 1 || e.Processes()-before != 2 {
		t.Errorf("apply of the saved plan: %v, %d processes; want the update, by apply and output", c, e.Processes()-before)
	}
	if _, err := os.Stat(filepath.Join(e.Dir("w1"), planFile)); !os.IsNotExist(err) {
		t.Errorf("the saved plan (it holds every variable's value) outlived the apply: %v", err)
	}
	var stale *StalePlanError
	if _, err := e.ApplyPlan(ctx, ws, again); !errors.As(err, &stale) {
		t.Errorf("applying a plan made before the state changed: %v, want a StalePlanError", err)
	}
	if err := e.Destroy(ctx, ws); err != nil {
		t.Fatal(err)
	}
}

// TestPlanHidesSensitiveValues: a sensitive value changes the plan's id, yet appears
// neither in the id's inputs nor in the text.
func TestPlanHidesSensitiveValues(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	files := func(token string) map[string][]byte {
		m, err := module.Load(os.DirFS("testdata"), "echo")
		if err != nil {
			t.Fatal(err)
		}
		ws, err := render.Render(render.Input{Module: m, Values: map[string]any{"text": "x", "token": token}})
		if err != nil {
			t.Fatal(err)
		}
		return ws.Files
	}
	ws := Workspace{ID: "s1", Files: files("first-secret")}
	if _, err := e.Create(ctx, ws); err != nil {
		t.Fatal(err)
	}
	ws.Files = files("second-secret")
	p1, err := e.Plan(ctx, ws, PlanOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	ws.Files = files("third-secret")
	p2, err := e.Plan(ctx, ws, PlanOptions{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	if !p1.OutputsChange || p1.ID == "" || p1.ID == p2.ID {
		t.Errorf("a changed sensitive output must change the plan and its id: %q %q", p1.ID, p2.ID)
	}
	for _, s := range []string{"first-secret", "second-secret"} {
		if strings.Contains(p1.Text, s) {
			t.Errorf("plan text shows %s:\n%s", s, p1.Text)
		}
	}
	if !strings.Contains(p1.Text, "~ token = (sensitive value) -> (sensitive value)") {
		t.Errorf("plan text does not mask the sensitive output:\n%s", p1.Text)
	}
}

func TestErrorsAreRedacted(t *testing.T) {
	e := newEngine(t)
	ws := Workspace{ID: "bad", Files: map[string][]byte{"main.tf": []byte(`resource "nope" "x" {}` + "\n# s3cr3t-value\n")},
		Env: map[string]string{"TERRAPLANE_TEST_VALUE": "s3cr3t-value"}}
	_, err := e.Create(context.Background(), ws)
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
// creating a workspace whose outputs are all non-sensitive runs only init and apply, and
// no `terraform version` (the engine gives each handle the version it read at start); a
// wrapper around the binary counts every process.
func TestCreateWithoutSensitiveOutputsTakesTwoProcesses(t *testing.T) {
	e, calls := countingEngine(t, 10)
	res, err := e.Create(context.Background(), Workspace{ID: "plain", Files: renderData(t, "n1")})
	if err != nil {
		t.Fatal(err)
	}
	if got := calls(); strings.Join(got, " ") != "init/GOGC=400 apply/GOGC=" || e.Processes() != 2 {
		t.Errorf("terraform ran %v (%d counted), want init (with its GC target) and apply (with Go's default) only", got, e.Processes())
	}
	if string(res.Outputs["id"].Value) != `"n1"` {
		t.Errorf("outputs = %v", res.Outputs)
	}
	if _, err := e.Plan(context.Background(), Workspace{ID: "plain", Files: renderData(t, "n1")}, PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := calls(); slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "version/") }) {
		t.Errorf("terraform ran %v: a handle asked for the version", got)
	}
}

// TestOneSlotPerVerb: a workspace keeps its slot from init to apply, so with one slot two
// creates run init, apply, apply (the second copies the first one's init of their
// module), never init, init, apply, apply.
func TestOneSlotPerVerb(t *testing.T) {
	e, calls := countingEngine(t, 1)
	errs := make(chan error, 2)
	for _, id := range []string{"a", "b"} {
		go func() {
			_, err := e.Create(context.Background(), Workspace{ID: id, Files: renderData(t, id)})
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(calls(), " "); got != "init/GOGC=400 apply/GOGC= apply/GOGC=" {
		t.Errorf("terraform ran %s, want one init and each workspace's apply back to back", got)
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
	return renderDataWith(t, name, render.Backend{})
}

// renderDataWith is renderData with a backend block.
func renderDataWith(t *testing.T, name string, backend render.Backend) map[string][]byte {
	t.Helper()
	m, err := module.FromFiles(map[string][]byte{"main.tf": []byte(`
variable "name" { type = string }
resource "terraform_data" "this" { input = var.name }
output "id" { value = terraform_data.this.output }
`)})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := render.Render(render.Input{Module: m, Values: map[string]any{"name": name}, Backend: backend})
	if err != nil {
		t.Fatal(err)
	}
	return ws.Files
}

func TestGroupCap(t *testing.T) {
	e := &Engine{opts: Options{MaxConcurrentPerGroup: 1}, slots: make(chan struct{}, 4)}
	ctx := context.Background()
	release, err := e.acquire(ctx, Workspace{Group: "aws/minio"})
	if err != nil {
		t.Fatal(err)
	}
	if other, err := e.acquire(ctx, Workspace{Group: "postgresql/pg"}); err != nil {
		t.Fatal("another group must not wait:", err)
	} else {
		other()
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := e.acquire(short, Workspace{Group: "aws/minio"}); err == nil {
		t.Fatal("a second run of a capped group must wait")
	}
	release()
	again, err := e.acquire(ctx, Workspace{Group: "aws/minio"})
	if err != nil {
		t.Fatal(err)
	}
	again()
	if len(e.slots) != 0 {
		t.Errorf("%d global slots leaked", len(e.slots))
	}
}
