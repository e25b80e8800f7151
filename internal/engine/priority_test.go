package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/render"
)

// TestArrivalsRank: a run's processes are lowered by the runs in flight that began
// before it, and only by those.
func TestArrivalsRank(t *testing.T) {
	var a arrivals
	leaveA := a.enter("a")
	leaveB := a.enter("b")
	leaveC := a.enter("c")
	for id, want := range map[string]int{"a": 0, "b": 2, "c": 4, "idle": 0} {
		if got := a.nice(id); got != want {
			t.Errorf("nice(%s) = %d, want %d", id, got, want)
		}
	}
	leaveA()
	if got := a.nice("c"); got != 2 {
		t.Errorf("after the oldest run ended, nice(c) = %d, want 2", got)
	}
	again := a.enter("b") // a second verb of b keeps b's place
	if got := a.nice("b"); got != 0 {
		t.Errorf("nice(b) with two runs = %d, want 0", got)
	}
	again()
	leaveB()
	leaveC()
	leaveD := a.enter("d")
	if got := a.nice("d"); got != 0 {
		t.Errorf("a run alone: nice(d) = %d, want 0", got)
	}
	leaveD()
	var many arrivals
	for i := range 30 {
		many.enter(strconv.Itoa(i))
	}
	if got := many.nice("29"); got != maxNice {
		t.Errorf("nice with 29 runs ahead = %d, want the cap %d", got, maxNice)
	}
}

// niceOfChild is the nice value of a process started here.
func niceOfChild(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("sh", "-c", "cut -d' ' -f19 /proc/self/stat").Output()
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAtNiceLowersOnlyTheProcess: the process started in atNice runs at the lowered
// priority; the ones started afterwards, and the caller, keep theirs; a panic reaches
// the caller.
func TestAtNiceLowersOnlyTheProcess(t *testing.T) {
	base := niceOfChild(t)
	var inside int
	if err := atNice(3, func() error { inside = niceOfChild(t); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := min(maxNice, base+3); inside != want {
		t.Errorf("nice inside atNice(3) = %d, want %d", inside, want)
	}
	for range 5 { // whichever thread runs the caller now, it was not lowered
		if after := niceOfChild(t); after != base {
			t.Fatalf("nice after atNice = %d, want %d as before", after, base)
		}
	}
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want the panic of fn", p)
		}
	}()
	_ = atNice(1, func() error { panic("boom") })
}

// TestOlderRunsGetTheCPUFirst runs real terraform: while one workspace's apply is in
// flight, the apply of a workspace that began after it runs at a lower priority, and
// the first keeps its own.
func TestOlderRunsGetTheCPUFirst(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	dir := t.TempDir()
	base := niceOfChild(t)
	files := func(name string, hold bool) map[string][]byte {
		m, err := module.FromFiles(map[string][]byte{"main.tf": []byte(`
variable "dir" { type = string }
variable "name" { type = string }
variable "hold" { type = bool }
resource "terraform_data" "this" {
  provisioner "local-exec" {
    command = "cut -d' ' -f19 /proc/self/stat > ${var.dir}/${var.name}.nice; i=0; while ${var.hold} && [ ! -e ${var.dir}/release ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done"
  }
}
`)})
		if err != nil {
			t.Fatal(err)
		}
		ws, err := render.Render(render.Input{Module: m, Values: map[string]any{"dir": dir, "name": name, "hold": hold}})
		if err != nil {
			t.Fatal(err)
		}
		return ws.Files
	}
	first := make(chan error, 1)
	go func() {
		_, err := e.Create(ctx, Workspace{ID: "first", Files: files("first", true)})
		first <- err
	}()
	read := func(name string) int {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			b, err := os.ReadFile(filepath.Join(dir, name+".nice"))
			if n, aerr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && aerr == nil {
				return n
			}
		}
		t.Fatalf("%s's apply did not start", name)
		return 0
	}
	if got := read("first"); got != base {
		t.Errorf("the first run's nice = %d, want %d", got, base)
	}
	if _, err := e.Create(ctx, Workspace{ID: "second", Files: files("second", false)}); err != nil {
		t.Fatal(err)
	}
	if got, want := read("second"), min(maxNice, base+nicePerRunAhead); got != want {
		t.Errorf("the second run's nice, with the first in flight = %d, want %d", got, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}
