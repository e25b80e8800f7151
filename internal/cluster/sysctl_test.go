package cluster

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSaveSysctls records the node's kernel settings as they are, and only before the
// first start: a later start keeps the record, so Stop restores what the machine had.
func TestSaveSysctls(t *testing.T) {
	o := Options{Dir: t.TempDir()}
	if err := saveSysctls(o); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(o.path("sysctl.json"))
	if err != nil {
		t.Fatal(err)
	}
	saved := map[string]string{}
	if err := json.Unmarshal(raw, &saved); err != nil {
		t.Fatal(err)
	}
	if _, ok := saved["vm/overcommit_memory"]; !ok {
		t.Errorf("record %v lacks vm/overcommit_memory, which every kernel has", saved)
	}
	for k, v := range saved {
		if !slices.Contains(sysctls, k) {
			t.Errorf("recorded %s, which a node does not change", k)
		}
		cur, err := os.ReadFile("/proc/sys/" + k)
		if err != nil || strings.TrimSpace(string(cur)) != v {
			t.Errorf("%s recorded as %q, the kernel has %q (%v)", k, v, cur, err)
		}
	}
	const first = `{"kernel/panic":"0"}`
	if err := os.WriteFile(o.path("sysctl.json"), []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := saveSysctls(o); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(o.path("sysctl.json")); string(raw) != first {
		t.Errorf("a second start rewrote the record: %s", raw)
	}
}

// TestRestoreSysctls: no record is nothing to do; a record the kernel already agrees
// with is removed without writing; a setting that cannot be written is an error naming
// it, and the record stays for the next Stop; a corrupt record is an error naming it.
// (The settings used are ones no write can change, so the test leaves the host alone.)
func TestRestoreSysctls(t *testing.T) {
	ostype, err := os.ReadFile("/proc/sys/kernel/ostype")
	if err != nil {
		t.Skip("no /proc/sys/kernel/ostype")
	}
	for _, tc := range []struct {
		name    string
		record  string // "" for none
		wantErr string
		kept    bool
	}{
		{name: "no record"},
		{name: "as the kernel has it", record: `{"kernel/ostype":"` + strings.TrimSpace(string(ostype)) + `"}`},
		{name: "cannot be written", record: `{"terraplane/no-such-setting":"1"}`, wantErr: "restore terraplane/no-such-setting=1", kept: true},
		{name: "corrupt", record: `{"kernel/ostype":`, wantErr: "sysctl.json", kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Dir: t.TempDir()}
			if tc.record != "" {
				if err := os.WriteFile(o.path("sysctl.json"), []byte(tc.record), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := restoreSysctls(o)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("restoreSysctls = %v, want an error containing %q", err, tc.wantErr)
			}
			if _, err := os.Stat(o.path("sysctl.json")); (err == nil) != tc.kept {
				t.Errorf("record kept %v, want %v", err == nil, tc.kept)
			}
		})
	}
}

// TestKillProcs kills every process a cgroup.procs file lists, skipping what is not a
// process id, and returns once they are gone.
func TestKillProcs(t *testing.T) {
	var cmds []*exec.Cmd
	var list []string
	for range 2 {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
		list = append(list, strconv.Itoa(c.Process.Pid))
	}
	procs := t.TempDir() + "/cgroup.procs"
	if err := os.WriteFile(procs, []byte(list[0]+"\nx\n-3\n0\n"+list[1]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	killProcs(procs)
	for _, c := range cmds {
		var exit *exec.ExitError
		if err := c.Wait(); !errors.As(err, &exit) || exit.ProcessState.String() != "signal: killed" {
			t.Errorf("process %d: %v, want killed", c.Process.Pid, err)
		}
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("killProcs took %s", time.Since(start))
	}
	killProcs(procs + ".absent") // a cgroup gone meanwhile: nothing to kill, no panic
}
