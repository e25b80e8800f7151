package main

import (
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCoreSplit(t *testing.T) {
	if s, err := newCoreSplit(0); s != nil || err != nil {
		t.Errorf("newCoreSplit(0) = %v, %v; want no split", s, err)
	}
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	if _, err := newCoreSplit(all.Count()); err == nil {
		t.Errorf("a split that leaves the controllers no CPU was accepted")
	}
	if all.Count() < 2 {
		return
	}
	s, err := newCoreSplit(1)
	if err != nil {
		t.Fatal(err)
	}
	if s.plane.Count() != 1 || s.work.Count() != all.Count()-1 {
		t.Errorf("split %d / %d of %d CPUs; want 1 for the control plane, the rest for the work", s.plane.Count(), s.work.Count(), all.Count())
	}
	for cpu := range 1024 {
		if s.plane.IsSet(cpu) && s.work.IsSet(cpu) {
			t.Errorf("CPU %d given to both sides", cpu)
		}
	}
	cmd := exec.Command("sleep", "5")
	if err := s.start(cmd); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(cmd.Process.Pid, &got); err != nil {
		t.Fatal(err)
	}
	if got != s.work {
		t.Errorf("child started on %d CPUs; want the %d work CPUs", got.Count(), s.work.Count())
	}
}
