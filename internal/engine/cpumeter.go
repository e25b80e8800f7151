package engine

import (
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// rateMeter turns a counter of CPU-seconds into idle cores since its previous reading.
type rateMeter struct {
	read func() (float64, bool) // the counter; false when it cannot be read
	idle func(rate float64) float64

	mu   sync.Mutex
	last time.Time
	prev float64
}

// IdleCores implements CPUMeter.
func (m *rateMeter) IdleCores() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	reading, ok := m.read()
	if !ok {
		return 0
	}
	prev, elapsed, first := m.prev, now.Sub(m.last).Seconds(), m.last.IsZero()
	m.last, m.prev = now, reading
	if first || elapsed <= 0 {
		return 0
	}
	return max(0, m.idle((reading-prev)/elapsed))
}

// MachineCPU reads the machine's idle CPU (/proc/stat); a machine whose /proc cannot be
// read reports none, which leaves the ramp to its runs' ends and its hold.
func MachineCPU() CPUMeter {
	fs, err := procfs.NewDefaultFS()
	read := func() (float64, bool) {
		if err != nil {
			return 0, false
		}
		st, err := fs.Stat()
		if err != nil {
			return 0, false
		}
		return st.CPUTotal.Idle + st.CPUTotal.Iowait, true
	}
	return &rateMeter{read: read, idle: func(rate float64) float64 { return rate }}
}

// ContainerCPU reads the idle CPU within a container's limit of cores, from used, the
// CPU-seconds the container has used.
func ContainerCPU(cores float64, used func() (float64, bool)) CPUMeter {
	return &rateMeter{read: used, idle: func(rate float64) float64 { return cores - rate }}
}
