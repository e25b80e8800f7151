package holder

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseStart(t *testing.T) {
	line := []byte("42 (a (weird) name) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10")
	if got, err := parseStat(line); err != nil || got != (stat{start: 987654}) {
		t.Fatalf("parseStat = %+v, %v; want start 987654", got, err)
	}
	zombie := []byte("42 (x) Z 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10")
	if got, err := parseStat(zombie); err != nil || !got.exited {
		t.Fatalf("parseStat(zombie) = %+v, %v; want exited", got, err)
	}
	if _, err := ProcessStart(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}

// TestExitedProcessIsNotRunning: a holder that exited but was not yet reaped by its
// parent (a zombie, still in the process table with its start time) no longer runs.
func TestExitedProcessIsNotRunning(t *testing.T) {
	cmd := exec.Command("sleep", "0.3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	start, err := ProcessStart(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	h := Holder{PID: cmd.Process.Pid, Start: start}
	if !h.Running() {
		t.Fatal("a live process does not run")
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		if strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child never became a zombie: %s", b)
		}
	}
	if h.Running() {
		t.Error("an exited process that its parent has not reaped still counts as running")
	}
}

// TestHolderFacts: how a holder reads, whether it shares this process table, and how a
// malformed process status is refused.
func TestHolderFacts(t *testing.T) {
	if got, want := (Holder{ID: "a", PodName: "ctl-0", PodNamespace: "sys", PID: 7, Host: "h"}).String(), "terraplane a (pod sys/ctl-0)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := (Holder{ID: "a", PID: 7, Host: "h"}).String(), "terraplane a (pid 7 on h)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	here := Holder{Boot: "b", PIDNamespace: "pid:[1]"}
	for _, tc := range []struct {
		name string
		h    Holder
		want bool
	}{
		{"same boot and namespace", Holder{Boot: "b", PIDNamespace: "pid:[1]"}, true},
		{"another namespace", Holder{Boot: "b", PIDNamespace: "pid:[2]"}, false},
		{"another boot", Holder{Boot: "c", PIDNamespace: "pid:[1]"}, false},
		{"unknown boot", Holder{PIDNamespace: "pid:[1]"}, false},
		{"unknown namespace", Holder{Boot: "b"}, false},
	} {
		if got := tc.h.SameProcessTable(here); got != tc.want {
			t.Errorf("%s: SameProcessTable = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{"", "42 no paren S 1", "42 (x) S 1 2 3", "42 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 notanumber 9"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q): want an error", bad)
		}
	}
}

// TestNew: a second holder of this process is this process under an id of its own.
func TestNew(t *testing.T) {
	self, other := Self(), New()
	if other.ID == self.ID || other.ID == "" {
		t.Fatalf("New's id %q is not its own (Self's is %q)", other.ID, self.ID)
	}
	other.ID = self.ID
	if other != self {
		t.Errorf("New = %+v, want this process %+v", other, self)
	}
}

// TestStopLeftovers: the processes whose environment names a holder are stopped, and
// those of another holder are left alone.
func TestStopLeftovers(t *testing.T) {
	start := func(id string) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.Env = append(os.Environ(), Env+"="+id)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	left, other := start("gone-holder"), start("live-holder")
	if got := leftovers("gone-holder"); !slices.Equal(got, []int{left.Process.Pid}) {
		t.Fatalf("leftovers = %v, want [%d]", got, left.Process.Pid)
	}
	go func() { _ = left.Wait() }() // reaped, so that it leaves the process table
	if !StopLeftovers("gone-holder", 5*time.Second) {
		t.Fatal("StopLeftovers: a leftover still runs")
	}
	if got := alive([]int{left.Process.Pid, other.Process.Pid}); !slices.Equal(got, []int{other.Process.Pid}) {
		t.Errorf("alive after StopLeftovers = %v, want only the other holder's [%d]", got, other.Process.Pid)
	}
}
