package statelock

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Holder names the process that holds a state lock precisely enough to tell, later and
// from another process, whether it is gone: a random id per process, its pod (when it
// runs in one), and on its machine its process id and start time.
type Holder struct {
	// ID is random, made once per process.
	ID string `json:"id"`
	// Pod is the UID of the pod the process runs in; PodName and PodNamespace name it.
	Pod          string `json:"pod,omitempty"`
	PodName      string `json:"podName,omitempty"`
	PodNamespace string `json:"podNamespace,omitempty"`
	// Host is the machine's host name (for people; Boot tells machines apart).
	Host string `json:"host"`
	// Boot is the kernel's boot id: processes with the same Boot and PIDNamespace see
	// the same process table.
	Boot string `json:"boot,omitempty"`
	// PIDNamespace is the process's pid namespace.
	PIDNamespace string `json:"pidNamespace,omitempty"`
	// PID and Start (in clock ticks after boot) identify the process on its machine.
	PID   int    `json:"pid"`
	Start uint64 `json:"start,omitempty"`
	// Expires is when no terraform command of the lock can still run: the command's own
	// deadline (the resource's spec.timeout, or the controller's) and the grace after it.
	Expires time.Time `json:"expires,omitempty"`
}

// String is how the holder reads in a condition: enough to find the process.
func (h Holder) String() string {
	if h.PodName != "" {
		return fmt.Sprintf("terraplane %s (pod %s/%s)", h.ID, h.PodNamespace, h.PodName)
	}
	return fmt.Sprintf("terraplane %s (pid %d on %s)", h.ID, h.PID, h.Host)
}

// Environment variables through which a pod tells the controller who it is (the
// downward API in the chart).
const (
	envPodUID       = "POD_UID"
	envPodName      = "POD_NAME"
	envPodNamespace = "POD_NAMESPACE"
)

var (
	selfOnce sync.Once
	self     Holder
)

// Self is this process as a lock holder.
func Self() Holder {
	selfOnce.Do(func() {
		host, _ := os.Hostname()
		self = Holder{
			ID: newHolderID(), Host: host,
			Pod: os.Getenv(envPodUID), PodName: os.Getenv(envPodName), PodNamespace: os.Getenv(envPodNamespace),
			Boot: readTrimmed("/proc/sys/kernel/random/boot_id"), PID: os.Getpid(),
		}
		self.PIDNamespace, _ = os.Readlink("/proc/self/ns/pid")
		self.Start, _ = processStart(self.PID)
	})
	return self
}

// newHolderID is a random holder id.
func newHolderID() string {
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	return hex.EncodeToString(id)
}

// sameProcessTable reports whether h's process id means the same process here.
func (h Holder) sameProcessTable(other Holder) bool {
	return h.Boot != "" && h.Boot == other.Boot && h.PIDNamespace != "" && h.PIDNamespace == other.PIDNamespace
}

// running reports whether the process h names runs on this machine: its pid exists and
// started when h says (a pid reused by another process does not count).
// An exited process its parent has not reaped yet (a zombie) does not run.
func (h Holder) running() bool {
	st, err := readStat(h.PID)
	return err == nil && !st.exited && st.start == h.Start
}

// processStart reads when process pid started, in clock ticks after boot.
func processStart(pid int) (uint64, error) {
	st, err := readStat(pid)
	return st.start, err
}

// stat is what a lock holder's check needs of /proc/<pid>/stat.
type stat struct {
	start  uint64 // field 22: clock ticks after boot
	exited bool   // state Z (zombie) or X (dead)
}

// readStat reads /proc/<pid>/stat.
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(b)
}

// parseStat reads a /proc/<pid>/stat line, whose command name may hold spaces and
// parentheses.
func parseStat(line []byte) (stat, error) {
	i := bytes.LastIndexByte(line, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("unreadable process status")
	}
	fields := strings.Fields(string(line[i+1:]))
	const startField = 22 - 3 // fields 1 and 2 (pid, comm) precede the ')'; state is field 3
	if len(fields) <= startField {
		return stat{}, fmt.Errorf("unreadable process status")
	}
	start, err := strconv.ParseUint(fields[startField], 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("unreadable process start: %w", err)
	}
	return stat{start: start, exited: fields[0] == "Z" || fields[0] == "X"}, nil
}

func readTrimmed(path string) string {
	b, _ := os.ReadFile(path)
	return strings.TrimSpace(string(b))
}
