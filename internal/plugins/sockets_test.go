package plugins

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSocketDirRemovesThoseOfGoneProcesses: a pool's socket directory is named for its
// process; making one removes the directories of processes that are gone, and keeps
// those of running processes and those whose name says no owner.
func TestSocketDirRemovesThoseOfGoneProcesses(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mk := func(name string) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "plugin.sock"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return d
	}
	dead := mk(fmt.Sprintf("plugins-%d-123", gone.ProcessState.Pid()))
	live := mk(fmt.Sprintf("plugins-%d-456", os.Getppid()))
	unowned := mk("plugins-789")
	other := mk("something-else-1-2")

	got, err := socketDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("plugins-%d-", os.Getpid()); !strings.HasPrefix(filepath.Base(got), want) {
		t.Errorf("socket directory %s, want it named %s…", got, want)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the directory of a process that is gone stayed (%v)", err)
	}
	for _, d := range []string{live, unowned, other, got} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(d), err)
		}
	}
}
