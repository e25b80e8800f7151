package holder

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// TestRunning: a holder runs only while its pid exists with the start it recorded; a
// reused pid (another start) or a pid nobody has is not it.
func TestRunning(t *testing.T) {
	me := Self()
	if !me.Running() {
		t.Fatal("this process does not run")
	}
	for name, h := range map[string]Holder{
		"its pid, another start": {PID: me.PID, Start: me.Start + 1},
		"a pid nobody has":       {PID: 1 << 30, Start: me.Start},
		"no pid":                 {},
	} {
		if h.Running() {
			t.Errorf("%s: runs", name)
		}
	}
}

// TestLeftoversExactMark: a process counts as a holder's only when its environment names
// that very id, not one the id begins or is part of.
func TestLeftoversExactMark(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), Env+"=holder-12")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for id, want := range map[string]bool{"holder-12": true, "holder-1": false, "holder-123": false, "": false} {
		if got := slices.Contains(leftovers(id), cmd.Process.Pid); got != want {
			t.Errorf("leftovers(%q) has the process: %v, want %v", id, got, want)
		}
	}
}

// TestStopLeftoversNone: a holder that left nothing running is free at once.
func TestStopLeftoversNone(t *testing.T) {
	start := time.Now()
	if !StopLeftovers("a-holder-that-ran-nothing", time.Minute) {
		t.Fatal("StopLeftovers with no leftovers: not free")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("StopLeftovers with no leftovers took %s", took)
	}
}

// TestHolderJSON: what a lock records of its holder reads back the same, and the pod
// fields are left out for a holder outside a pod.
func TestHolderJSON(t *testing.T) {
	h := Holder{ID: "abc", Pod: "uid-1", PodName: "ctl-0", PodNamespace: "sys", Host: "node", Boot: "boot-1",
		PIDNamespace: "pid:[4026531836]", PID: 42, Start: 987654, Expires: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	raw, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back Holder
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back != h {
		t.Errorf("read back %+v, want %+v", back, h)
	}
	raw, err = json.Marshal(Holder{ID: "abc", Host: "node", PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"pod", "podName", "podNamespace", "boot", "pidNamespace", "start"} {
		if _, ok := fields[k]; ok {
			t.Errorf("%s is written for a holder that has none: %s", k, raw)
		}
	}
}
