package engine

import (
	"runtime"
	"strconv"
	"testing"
)

// TestCoresPerProcess: terraform processes running at once share the cores evenly, and
// each has at least one.
func TestCoresPerProcess(t *testing.T) {
	for _, tc := range []struct{ cores, running, want int }{
		{2, 1, 2},
		{2, 2, 1},
		{2, 10, 1},
		{8, 3, 2},
		{16, 4, 4},
		{4, 0, 4},
		{1, 5, 1},
	} {
		if got := coresPerProcess(tc.cores, tc.running); got != tc.want {
			t.Errorf("%d cores, %d running: %d each, want %d", tc.cores, tc.running, got, tc.want)
		}
	}
}

// TestTerraformEnvSharesTheCores: a terraform process gets its share of the cores among
// the slots in use, the workspace's own GOMAXPROCS wins, and the environment the warm
// providers are keyed by has no share in it.
func TestTerraformEnvSharesTheCores(t *testing.T) {
	e := &Engine{slots: make(chan struct{}, 10)}
	for range 4 {
		e.slots <- struct{}{}
	}
	ws := Workspace{ID: "ws", Env: map[string]string{"AWS_REGION": "eu-west-1"}}
	want := strconv.Itoa(coresPerProcess(runtime.GOMAXPROCS(0), 4))
	if got := e.terraformEnv(ws); got["GOMAXPROCS"] != want || got["AWS_REGION"] != "eu-west-1" {
		t.Errorf("terraform's environment %v, want GOMAXPROCS=%s beside the workspace's", got, want)
	}
	if _, set := e.env(ws)["GOMAXPROCS"]; set {
		t.Error("the environment the warm providers are keyed by holds GOMAXPROCS")
	}
	ws.Env["GOMAXPROCS"] = "3"
	if got := e.terraformEnv(ws)["GOMAXPROCS"]; got != "3" {
		t.Errorf("GOMAXPROCS %q, want the workspace's 3", got)
	}
}
