package holder

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Env is set, in every terraform process a holder runs, to the holder's id. What
// terraform starts inherits it (providers, and provisioner shells that outlive a killed
// terraform), so that the processes a dead holder left running can be found.
const Env = "TERRAPLANE_LOCK_HOLDER"

// LeftoverWait bounds how long the processes a dead holder left are waited for, once
// stopped, before its lock is judged again later.
const LeftoverWait = 5 * time.Second

// StopLeftovers stops the processes holder id's runs left running on this machine (a
// provisioner shell still creating what its killed terraform started, say), and reports
// whether none is left: until then, its lock is not provably free.
func StopLeftovers(id string, wait time.Duration) bool {
	pids := leftovers(id)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		pids = alive(pids)
		if len(pids) == 0 || time.Now().After(deadline) {
			return len(pids) == 0
		}
	}
}

// leftovers lists the processes of this process table whose environment names holder id.
// A process whose environment cannot be read (another user's) is not one of them.
func leftovers(id string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	mark := []byte(Env + "=" + id)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, mark) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// alive keeps the pids whose process still runs (an exited one not yet reaped does not).
func alive(pids []int) []int {
	var out []int
	for _, pid := range pids {
		if st, err := readStat(pid); err == nil && !st.exited {
			out = append(out, pid)
		}
	}
	return out
}
