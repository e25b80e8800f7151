package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Stop stops the cluster in o.Dir: the Kubernetes components, every pod's containers,
// containerd and its shims, etcd; then it unmounts everything under o.Dir and undoes the
// host changes (iptables rules, bridge, node address, cgroups, kernel settings). The
// data stays, so Start resumes. It is safe to run when nothing runs.
func Stop(o Options, log io.Writer) error {
	cl := &Cluster{Options: o}
	var errs []error
	comps := components(o)
	for i := len(comps) - 1; i >= 0; i-- {
		c := comps[i]
		if c.name == "containerd" {
			cl.removeContainers(log)
		}
		pid := running(o, c)
		if pid == 0 {
			continue
		}
		start := time.Now()
		if err := stopProcess(pid, 5*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", c.name, err))
		} else {
			fmt.Fprintf(log, "cluster: stopped %s (pid %d, %s)\n", c.name, pid, time.Since(start).Round(10*time.Millisecond))
		}
	}
	if err := cleanup(o, log); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// removeContainers stops and deletes every container containerd runs for the CRI, so
// that a later start begins with none (the CNI addresses are reset with them).
func (cl *Cluster) removeContainers(log io.Writer) {
	if running(cl.Options, cl.component("containerd")) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tasks, err := cl.ctr(ctx, "tasks", "ls", "-q")
	if err != nil {
		fmt.Fprintf(log, "cluster: list containers: %v\n", err)
		return
	}
	for _, id := range strings.Fields(tasks) {
		_, _ = cl.ctr(ctx, "tasks", "kill", "-s", "SIGKILL", id)
	}
	for _, id := range strings.Fields(tasks) {
		_, _ = cl.ctr(ctx, "tasks", "rm", "-f", id)
	}
	containers, _ := cl.ctr(ctx, "containers", "ls", "-q")
	for _, id := range strings.Fields(containers) {
		_, _ = cl.ctr(ctx, "containers", "rm", id)
	}
	fmt.Fprintf(log, "cluster: removed %d containers\n", len(strings.Fields(containers)))
}

// cleanup undoes what a node leaves behind once its processes are gone: containerd's
// shims and whatever still runs in the pods' cgroups, the mounts under o.Dir, kube-proxy's
// iptables rules, the bridge and node address, the CNI address reservations, and the
// kernel settings.
func cleanup(o Options, log io.Writer) error {
	var errs []error
	if n := killShims(o); n > 0 {
		fmt.Fprintf(log, "cluster: killed %d containerd shims\n", n)
	}
	add := func(what string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
	}
	add("cgroups", removeCgroups())
	add("mounts", unmountAll(o.Dir))
	add("iptables", proxyCleanup(o))
	add("iptables", removeKubeChains())
	add("network", removeNetwork(o))
	add("CNI addresses", os.RemoveAll(o.path("cni", "ipam")))
	add("kernel settings", restoreSysctls(o))
	pids, _ := filepath.Glob(o.path("run", "*.pid"))
	for _, p := range pids {
		_ = os.Remove(p)
	}
	return errors.Join(errs...)
}

// killShims kills the containerd shims serving o's containerd (they name its socket in
// their arguments) and returns how many there were.
func killShims(o Options) int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	n := 0
	for _, p := range procs {
		raw, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(raw), "containerd-shim") || !strings.Contains(string(raw), o.socket()) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err == nil && stopProcess(pid, 2*time.Second) == nil {
			n++
		}
	}
	return n
}

// proxyCleanup removes kube-proxy's iptables rules (kube-proxy --cleanup).
func proxyCleanup(o Options) error {
	bin := filepath.Join(o.Bin, "kube-proxy")
	if _, err := os.Stat(bin); err != nil {
		return nil
	}
	out, err := exec.Command(bin, "--cleanup", "--v=0").CombinedOutput()
	if err != nil {
		return fmt.Errorf("kube-proxy --cleanup: %v: %s", err, tail2(string(out)))
	}
	return nil
}

// tail2 is the last two lines of s.
func tail2(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 2 {
		lines = lines[len(lines)-2:]
	}
	return strings.Join(lines, "\n")
}
