package cluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// sysctls are the kernel settings a node changes: the kubelet's (it sets them unless told
// to fail instead), the bridge plugin's forwarding, and bridge netfilter for kube-proxy.
var sysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
	"net/ipv4/ip_forward", "net/ipv4/conf/all/route_localnet", "net/bridge/bridge-nf-call-iptables",
}

// saveSysctls records the kernel settings before the first start (a later start keeps
// the first record, so Stop restores what the machine had).
func saveSysctls(o Options) error {
	if _, err := os.Stat(o.path("sysctl.json")); err == nil {
		return nil
	}
	saved := map[string]string{}
	for _, k := range sysctls {
		if v, err := os.ReadFile("/proc/sys/" + k); err == nil {
			saved[k] = strings.TrimSpace(string(v))
		}
	}
	raw, err := json.Marshal(saved)
	if err != nil {
		return err
	}
	return os.WriteFile(o.path("sysctl.json"), raw, 0o600)
}

// restoreSysctls writes back what saveSysctls recorded.
func restoreSysctls(o Options) error {
	raw, err := os.ReadFile(o.path("sysctl.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	saved := map[string]string{}
	if err := json.Unmarshal(raw, &saved); err != nil {
		return fmt.Errorf("read %s: %w", o.path("sysctl.json"), err)
	}
	var errs []error
	for k, v := range saved {
		cur, err := os.ReadFile("/proc/sys/" + k)
		if err == nil && strings.TrimSpace(string(cur)) == v {
			continue
		}
		if err := os.WriteFile("/proc/sys/"+k, []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore %s=%s: %w", k, v, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.Remove(o.path("sysctl.json"))
}

// addNodeAddress puts NodeIP on lo (once).
func addNodeAddress(o Options) error {
	out, err := exec.Command("ip", "-o", "addr", "show", "dev", "lo").Output()
	if err != nil {
		return fmt.Errorf("ip addr show dev lo: %w", err)
	}
	if strings.Contains(string(out), " "+o.NodeIP+"/32 ") {
		return nil
	}
	if out, err := exec.Command("ip", "addr", "add", o.NodeIP+"/32", "dev", "lo").CombinedOutput(); err != nil {
		return fmt.Errorf("ip addr add %s/32 dev lo: %v: %s", o.NodeIP, err, out)
	}
	return nil
}

// removeNetwork deletes the node address and the pods' bridge (tolerating their absence).
func removeNetwork(o Options) error {
	var errs []error
	if out, err := exec.Command("ip", "addr", "del", o.NodeIP+"/32", "dev", "lo").CombinedOutput(); err != nil &&
		!strings.Contains(string(out), "Cannot assign") && !strings.Contains(string(out), "Address not found") {
		errs = append(errs, fmt.Errorf("ip addr del %s/32 dev lo: %v: %s", o.NodeIP, err, out))
	}
	if out, err := exec.Command("ip", "link", "del", bridgeName).CombinedOutput(); err != nil &&
		!strings.Contains(string(out), "Cannot find device") {
		errs = append(errs, fmt.Errorf("ip link del %s: %v: %s", bridgeName, err, out))
	}
	return errors.Join(errs...)
}

// mountsUnder lists the mount points under dir in mountinfo, deepest (latest) first.
func mountsUnder(mountinfo, dir string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		p := unescapeMount(f[4])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, and so on).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountAll unmounts every mount under dir, deepest first; a busy one is detached.
func unmountAll(dir string) error {
	var errs []error
	for range 5 { // a stacked mount point shows once per layer
		raw, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			return err
		}
		mounts := mountsUnder(string(raw), dir)
		if len(mounts) == 0 {
			return nil
		}
		errs = errs[:0]
		for _, m := range mounts {
			if err := unix.Unmount(m, 0); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
				if err := unix.Unmount(m, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
					errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// removeCgroups kills what is left in the cluster's cgroups and removes them, in every
// cgroup hierarchy.
func removeCgroups() error {
	roots, err := filepath.Glob("/sys/fs/cgroup/*" + cgroupRoot)
	if err != nil {
		return err
	}
	var errs []error
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		sort.Sort(sort.Reverse(sort.StringSlice(dirs))) // children before parents
		for _, d := range dirs {
			killProcs(filepath.Join(d, "cgroup.procs"))
			if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// killProcs SIGKILLs the processes a cgroup.procs file lists.
func killProcs(procs string) {
	raw, err := os.ReadFile(procs)
	if err != nil {
		return
	}
	for _, f := range strings.Fields(string(raw)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil && pid > 0 {
			_ = unix.Kill(pid, unix.SIGKILL)
			waitGone(pid, 5e9)
		}
	}
}

// makeCgroupRoot creates cgroupRoot in every cgroup v1 hierarchy (the kubelet wants it to
// exist).
func makeCgroupRoot() error {
	hierarchies, err := filepath.Glob("/sys/fs/cgroup/*/cgroup.procs")
	if err != nil {
		return err
	}
	for _, h := range hierarchies {
		if err := os.MkdirAll(filepath.Join(filepath.Dir(h), cgroupRoot), 0o755); err != nil {
			return fmt.Errorf("create cgroup: %w", err)
		}
	}
	return nil
}
