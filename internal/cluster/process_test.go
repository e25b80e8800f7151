package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestZombie reads the state after the command name, which may hold spaces and parens.
func TestZombie(t *testing.T) {
	for stat, want := range map[string]bool{
		"12 (kubelet) S 1 12":           false,
		"12 (kubelet) Z 1 12":           true,
		"12 (a) b) Z 1 12":              true,
		"12 (x) R 1":                    false,
		"12 (exiting) X 1":              true,
		"garbage":                       false,
		"12 (containerd-shim-runc) S 1": false,
	} {
		if got := zombie(stat); got != want {
			t.Errorf("zombie(%q) = %v, want %v", stat, got, want)
		}
	}
}

// TestRunning believes a pid file only when its process runs the component's binary.
func TestRunning(t *testing.T) {
	o := Options{Dir: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(o.Dir, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(o.pidFile(name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("me", strconv.Itoa(os.Getpid())+"\n")
	write("other", strconv.Itoa(os.Getpid()))
	write("junk", "not a pid")
	write("dead", "999999999")
	for _, tc := range []struct {
		c    component
		want int
	}{
		{component{name: "me", binary: filepath.Join("/somewhere", filepath.Base(self))}, os.Getpid()},
		{component{name: "other", binary: "kubelet"}, 0},
		{component{name: "junk", binary: filepath.Base(self)}, 0},
		{component{name: "dead", binary: filepath.Base(self)}, 0},
		{component{name: "absent", binary: filepath.Base(self)}, 0},
	} {
		if got := running(o, tc.c); got != tc.want {
			t.Errorf("running(%s) = %d, want %d", tc.c.name, got, tc.want)
		}
	}
}

// TestStopProcessRefusesNoPid: a pid of 0 (what running returns for a component that is
// not running) signals nothing. kill(2) reads it as the caller's process group, so
// stopping it once ended the whole test run. The stop runs in a child with a process
// group of its own, which would die of the SIGTERM.
func TestStopProcessRefusesNoPid(t *testing.T) {
	if pid := os.Getenv("TP_STOP_PID"); pid != "" {
		n, _ := strconv.Atoi(pid)
		if err := stopProcess(n, time.Second); err == nil {
			fmt.Println("no error")
		}
		fmt.Println("alive")
		return
	}
	for _, pid := range []string{"0"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStopProcessRefusesNoPid$")
		cmd.Env = append(os.Environ(), "TP_STOP_PID="+pid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "alive") || strings.Contains(string(out), "no error") {
			t.Errorf("stopProcess(%s): %v, output %q; want an error and no signal", pid, err, out)
		}
	}
}
