package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pidFile is where a component's process id is kept.
func (o Options) pidFile(name string) string { return o.path("run", name+".pid") }

// logFile is a component's log.
func (o Options) logFile(name string) string { return o.path("logs", name+".log") }

// startDaemon starts c in its own session, so that it outlives the command that started
// it, with its output appended to its log, and records its process id.
func startDaemon(o Options, c component) error {
	bin, err := exec.LookPath(c.binary)
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	for _, d := range []string{"run", "logs"} {
		if err := os.MkdirAll(o.path(d), 0o700); err != nil {
			return err
		}
	}
	log, err := os.OpenFile(o.logFile(c.name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	fmt.Fprintf(log, "---- %s started %s\n", c.name, time.Now().Format(time.RFC3339))
	cmd := exec.Command(bin, c.args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Dir = o.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", c.name, err)
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release()
	return os.WriteFile(o.pidFile(c.name), []byte(strconv.Itoa(pid)+"\n"), 0o600)
}

// running returns the process id of component name if its pid file names a live
// process of its binary, else 0.
func running(o Options, c component) int {
	raw, err := os.ReadFile(o.pidFile(c.name))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 0 {
		return 0
	}
	if !isProcessOf(pid, filepath.Base(c.binary)) {
		return 0
	}
	return pid
}

// isProcessOf says whether process pid runs a binary named name (a recycled process id
// names another program). A process just started shows no arguments for a moment, until
// the kernel has set them up; it is read again then. A zombie has none for good.
func isProcessOf(pid int, name string) bool {
	for range 50 {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			return false
		}
		if len(cmdline) > 0 {
			argv0, _, _ := bytes.Cut(cmdline, []byte{0})
			return filepath.Base(string(argv0)) == name
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || zombie(string(stat)) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// stopProcess sends SIGTERM to pid, then SIGKILL after grace, and waits until it is gone.
// It refuses a pid below 1: kill(2) reads 0 as the caller's own process group and -1 as
// every process it may signal.
func stopProcess(pid int, grace time.Duration) error {
	if pid <= 0 {
		return fmt.Errorf("stop process %d: not a process id", pid)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		return err
	}
	if waitGone(pid, grace) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if !waitGone(pid, 10*time.Second) {
		return fmt.Errorf("process %d survived SIGKILL", pid)
	}
	return nil
}

// waitGone waits up to d for pid to exit (a zombie counts as gone).
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || zombie(string(stat)) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// zombie says whether a /proc/PID/stat line is a zombie's (state Z or X after the name).
func zombie(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	return stat[i+2] == 'Z' || stat[i+2] == 'X'
}
