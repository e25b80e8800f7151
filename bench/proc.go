package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proc is one process as /proc shows it.
type proc struct {
	pid, ppid int
	comm      string
}

// processes lists every process.
func processes() []proc {
	var out []proc
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		stat := string(raw)
		open, close := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
		f := strings.Fields(stat[close+2:])
		ppid, _ := strconv.Atoi(f[1])
		out = append(out, proc{pid: pid, ppid: ppid, comm: stat[open+1 : close]})
	}
	return out
}

// descendants lists root's descendants (root left out).
func descendants(all []proc, root int) []proc {
	children := map[int][]proc{}
	for _, p := range all {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []proc
	queue := []int{root}
	for len(queue) > 0 {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
		queue = queue[1:]
	}
	return out
}

// isTerraform reports whether a process is terraform or a provider plugin (the kernel
// keeps 15 characters of a name).
func isTerraform(comm string) bool {
	return comm == "terraform" || comm == "tofu" || strings.HasPrefix(comm, "terraform-provi")
}

// providerCPU is the CPU the controller's live provider processes have used: kept warm,
// they are not yet in the controller's children's CPU.
func providerCPU(ctrl int) time.Duration {
	var total time.Duration
	for _, p := range descendants(processes(), ctrl) {
		if strings.HasPrefix(p.comm, "terraform-provi") {
			if c, err := procCPU(p.pid); err == nil {
				total += c.self + c.children
			}
		}
	}
	return total
}

// rssMiB is a process's resident set now, in MiB.
func rssMiB(pid int) float64 { return statusMiB(pid, "VmRSS:") }

// statusMiB reads a memory line of /proc/<pid>/status (VmRSS:, VmHWM:), in MiB.
func statusMiB(pid int, field string) float64 {
	raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, field) {
			kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// treeSampler samples, every 200 ms, the summed resident set of a set of processes and
// keeps the peak.
type treeSampler struct {
	stop chan struct{}
	wg   sync.WaitGroup
	peak float64
}

// sampleTree starts sampling what pick returns from the process list.
func sampleTree(pick func([]proc) []int) *treeSampler {
	s := &treeSampler{stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			sum := 0.0
			for _, pid := range pick(processes()) {
				sum += rssMiB(pid)
			}
			s.peak = max(s.peak, sum)
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// done stops sampling and returns the peak, in MiB.
func (s *treeSampler) done() float64 {
	close(s.stop)
	s.wg.Wait()
	return s.peak
}

// controllerTree picks the controllers and everything they run.
func controllerTree(ctrls []int) func([]proc) []int {
	return func(all []proc) []int {
		out := slices.Clone(ctrls)
		for _, ctrl := range ctrls {
			for _, p := range descendants(all, ctrl) {
				out = append(out, p.pid)
			}
		}
		return out
	}
}

// rawTree picks the terraform and provider processes the bench itself runs.
func rawTree(ctrls []int) func([]proc) []int {
	return func(all []proc) []int {
		var out []int
		under := map[int]bool{}
		for _, pid := range controllerTree(ctrls)(all) {
			under[pid] = true
		}
		for _, p := range descendants(all, os.Getpid()) {
			if isTerraform(p.comm) && !under[p.pid] {
				out = append(out, p.pid)
			}
		}
		return out
	}
}
