package holder

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
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
			ID: newID(), Host: host,
			Pod: os.Getenv(envPodUID), PodName: os.Getenv(envPodName), PodNamespace: os.Getenv(envPodNamespace),
			Boot: readTrimmed("/proc/sys/kernel/random/boot_id"), PID: os.Getpid(),
		}
		self.PIDNamespace, _ = os.Readlink("/proc/self/ns/pid")
		self.Start, _ = ProcessStart(self.PID)
	})
	return self
}

// New is this process as a holder with an id of its own, for a second holder in one
// process (tests run several controllers in one process).
func New() Holder {
	h := Self()
	h.ID = newID()
	return h
}

// newID is a random holder id.
func newID() string {
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	return hex.EncodeToString(id)
}

// SameProcessTable reports whether h's process id means the same process as in other's
// process table.
func (h Holder) SameProcessTable(other Holder) bool {
	return h.Boot != "" && h.Boot == other.Boot && h.PIDNamespace != "" && h.PIDNamespace == other.PIDNamespace
}

// Running reports whether the process h names runs on this machine: its pid exists and
// started when h says (a pid reused by another process does not count).
// An exited process its parent has not reaped yet (a zombie) does not run.
func (h Holder) Running() bool {
	st, err := readStat(h.PID)
	return err == nil && !st.exited && st.start == h.Start
}
