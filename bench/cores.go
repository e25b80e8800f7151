package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// coreSplit keeps the control plane (kube-apiserver and etcd) and the bench itself, which
// plays the users, on some CPUs, and what the control plane serves (controllers,
// terraform, and the raw and single sides' terraform) on the others: as on a cluster,
// whose control plane runs on nodes of its own. A nil *coreSplit leaves every process
// where the kernel puts it.
type coreSplit struct{ plane, work unix.CPUSet }

// cores is the bench's split, set from -control-plane-cpus before anything starts.
var cores *coreSplit

// newCoreSplit gives the first planeCPUs of the CPUs this process may use to the control
// plane and the rest to the work; 0 splits nothing.
func newCoreSplit(planeCPUs int) (*coreSplit, error) {
	if planeCPUs <= 0 {
		return nil, nil
	}
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return nil, fmt.Errorf("read the CPUs this process may use: %w", err)
	}
	if all.Count() <= planeCPUs {
		return nil, fmt.Errorf("-control-plane-cpus %d leaves none of this process's %d CPUs for the controllers", planeCPUs, all.Count())
	}
	s := &coreSplit{}
	for cpu, given := 0, 0; given < all.Count(); cpu++ {
		if !all.IsSet(cpu) {
			continue
		}
		if given < planeCPUs {
			s.plane.Set(cpu)
		} else {
			s.work.Set(cpu)
		}
		given++
	}
	return s, nil
}

// start starts cmd on the work CPUs: a child takes the CPUs of the thread that starts it.
func (s *coreSplit) start(cmd *exec.Cmd) error {
	if s == nil {
		return cmd.Start()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		return fmt.Errorf("read this thread's CPUs: %w", err)
	}
	if err := unix.SchedSetaffinity(0, &s.work); err != nil {
		return fmt.Errorf("move to the work CPUs: %w", err)
	}
	defer func() { _ = unix.SchedSetaffinity(0, &before) }()
	return cmd.Start()
}

// pinPlane moves every thread of this process and of its kube-apiserver and etcd to the
// control plane's CPUs; threads they start later stay there.
func (s *coreSplit) pinPlane() error {
	if s == nil {
		return nil
	}
	pids := []int{os.Getpid()}
	for _, p := range processes() {
		if p.ppid == os.Getpid() && (p.comm == "kube-apiserver" || p.comm == "etcd") {
			pids = append(pids, p.pid)
		}
	}
	if len(pids) < 3 {
		return fmt.Errorf("found %d of kube-apiserver and etcd to move to the control plane's CPUs", len(pids)-1)
	}
	for range 2 { // a thread started while the first pass ran is moved by the second
		for _, pid := range pids {
			tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
			if err != nil {
				return fmt.Errorf("list the threads of %d: %w", pid, err)
			}
			for _, t := range tasks {
				tid, err := strconv.Atoi(t.Name())
				if err != nil {
					continue
				}
				if err := unix.SchedSetaffinity(tid, &s.plane); err != nil && err != unix.ESRCH {
					return fmt.Errorf("move thread %d of %d to the control plane's CPUs: %w", tid, pid, err)
				}
			}
		}
	}
	return nil
}
