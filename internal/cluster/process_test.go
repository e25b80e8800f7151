package cluster

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
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
