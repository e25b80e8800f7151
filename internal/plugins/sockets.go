package plugins

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// socketPrefix starts the name of a pool's socket directory, followed by its process's
// id and a random part: plugins-<pid>-<random>.
const socketPrefix = "plugins-"

// socketDir makes a directory for this process's provider sockets under dir, named for
// this process, and removes those of processes that are gone: a controller that was
// killed, or an engine never stopped, leaves its directory behind. A directory whose
// owner runs, or whose name says no owner, stays.
func socketDir(dir string) (string, error) {
	if stale, err := filepath.Glob(filepath.Join(dir, socketPrefix+"*-*")); err == nil {
		for _, d := range stale {
			if pid, ok := socketOwner(filepath.Base(d)); ok && !running(pid) {
				_ = os.RemoveAll(d)
			}
		}
	}
	sockets, err := os.MkdirTemp(dir, fmt.Sprintf("%s%d-", socketPrefix, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("provider socket directory: %w", err)
	}
	return sockets, nil
}

// socketOwner is the process id a socket directory's name holds.
func socketOwner(name string) (int, bool) {
	pid, _, ok := strings.Cut(strings.TrimPrefix(name, socketPrefix), "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(pid)
	return n, err == nil && n > 0
}

// running reports whether process pid exists (signal 0 checks without signalling; a
// process of another user answers EPERM, and exists).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
