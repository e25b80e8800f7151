package app

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"terraplane.io/terraplane/internal/engine"
)

// Sizing of the default cap on terraform processes. One apply with the aws provider
// takes about 580 MB of resident memory (provider included) and keeps a core busy.
const (
	terraformMemory  = 512 << 20 // memory budgeted per concurrent terraform process
	controllerMemory = 256 << 20 // memory kept for the controller itself
	terraformPerCPU  = 2         // terraform processes per CPU (they wait on APIs much of the time)
)

// Limits are the CPU and memory the controller's container may use.
type Limits struct {
	// CPUs is the CPU quota in cores (fractions allowed); 0 means no quota.
	CPUs float64
	// Memory is the memory limit in bytes; 0 means no limit.
	Memory int64
}

// ReadLimits reads the CPU quota and memory limit of the process's cgroup from the cgroup
// file system mounted at root (normally /sys/fs/cgroup): cgroup v2 first (cpu.max,
// memory.max), then v1 (cpu/cpu.cfs_quota_us, memory/memory.limit_in_bytes). The
// process's own cgroup comes from /proc/self/cgroup; in a container, whose cgroup
// namespace makes its cgroup the root, that is root itself.
func ReadLimits(root string) Limits {
	return readLimits(root, ownCgroups("/proc/self/cgroup"))
}

func readLimits(root string, own map[string]string) Limits {
	var l Limits
	if quota, period, ok := readPair(cgroupFile(root, "", own[""], "cpu.max")); ok {
		l.CPUs = quotaCPUs(quota, period)
	} else {
		quota, okQ := readInt(cgroupFile(root, "cpu", own["cpu"], "cpu.cfs_quota_us"))
		period, okP := readInt(cgroupFile(root, "cpu", own["cpu"], "cpu.cfs_period_us"))
		if okQ && okP {
			l.CPUs = quotaCPUs(quota, period)
		}
	}
	if m, ok := readInt(cgroupFile(root, "", own[""], "memory.max")); ok {
		l.Memory = m
	} else if m, ok := readInt(cgroupFile(root, "memory", own["memory"], "memory.limit_in_bytes")); ok {
		l.Memory = m
	}
	// cgroup v1 reports "no limit" as a number near the largest page-aligned int64.
	if l.Memory < 0 || l.Memory >= math.MaxInt64/2 {
		l.Memory = 0
	}
	return l
}

// cgroupFile is name in the process's cgroup of a hierarchy (controller "" for v2) when
// that exists, else in the hierarchy's root (a container's own cgroup).
func cgroupFile(root, controller, own, name string) string {
	if own != "" && own != "/" {
		p := filepath.Join(root, controller, own, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.Join(root, controller, name)
}

// ownCgroups maps each hierarchy's controllers ("" for cgroup v2, "cpu", "memory") to the
// process's cgroup path in it, read from a /proc/<pid>/cgroup file.
func ownCgroups(path string) map[string]string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out
}

// DefaultMaxConcurrentTerraform derives the cap on terraform processes from the limits:
// two per CPU of quota (or of the machine when there is none), and no more than the
// memory limit holds after the controller's share, at least one. It also says why.
func DefaultMaxConcurrentTerraform(l Limits) (int, string) {
	cpus, cpuFrom := l.CPUs, "CPU quota"
	if cpus <= 0 {
		cpus, cpuFrom = float64(runtime.NumCPU()), "CPUs"
	}
	n := int(math.Ceil(cpus * terraformPerCPU))
	why := fmt.Sprintf("%d × %g %s", terraformPerCPU, cpus, cpuFrom)
	if l.Memory > 0 {
		byMemory := int((l.Memory - controllerMemory) / terraformMemory)
		if byMemory < n {
			n = byMemory
			why = fmt.Sprintf("memory limit %d MiB: %d MiB for the controller, %d MiB per terraform process",
				l.Memory>>20, controllerMemory>>20, terraformMemory>>20)
		}
	}
	if n < 1 {
		n = 1
	}
	return n, why
}

func quotaCPUs(quota, period int64) float64 {
	if quota <= 0 || period <= 0 {
		return 0
	}
	return float64(quota) / float64(period)
}

// readPair reads "QUOTA PERIOD" (cpu.max); "max" as the quota means no quota.
func readPair(path string) (int64, int64, bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(raw))
	if len(f) != 2 {
		return 0, 0, false
	}
	period, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if f[0] == "max" {
		return 0, period, true
	}
	quota, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return quota, period, true
}

// readInt reads one integer; "max" (cgroup v2's "no limit") reads as 0.
func readInt(path string) (int64, bool) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := strings.TrimSpace(string(raw))
	if s == "max" {
		return 0, true
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// ContainerCPUMeter reads the idle CPU within this container's CPU quota when it has
// one and its cgroup counts the CPU it used, else the machine's.
func ContainerCPUMeter() engine.CPUMeter { return cpuMeter(ReadLimits(cgroupRoot), cgroupRoot) }

// cpuMeter is ContainerCPUMeter for limits l and the cgroup file system at root.
func cpuMeter(l Limits, root string) engine.CPUMeter {
	used := cpuUsed(root, ownCgroups("/proc/self/cgroup"))
	if _, ok := used(); l.CPUs <= 0 || !ok {
		return engine.MachineCPU()
	}
	return engine.ContainerCPU(l.CPUs, used)
}

// cpuUsed reads the CPU-seconds the process's cgroup has used: cgroup v2's cpu.stat
// (usage_usec), else v1's cpuacct.usage (nanoseconds).
func cpuUsed(root string, own map[string]string) func() (float64, bool) {
	v2, v1 := cgroupFile(root, "", own[""], "cpu.stat"), cgroupFile(root, "cpuacct", own["cpuacct"], "cpuacct.usage")
	return func() (float64, bool) {
		if raw, err := os.ReadFile(v2); err == nil {
			for _, line := range strings.Split(string(raw), "\n") {
				if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
					n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					return float64(n) / 1e6, err == nil
				}
			}
		}
		if ns, ok := readInt(v1); ok && ns > 0 {
			return float64(ns) / 1e9, true
		}
		return 0, false
	}
}
