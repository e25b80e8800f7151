package install

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// terraplaneBinary builds a static terraplane once for the tests of this package.
func terraplaneBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "terraplane-install-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "terraplane")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", binary, "terraplane.io/terraplane/cmd/terraplane")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %w: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// TestConcurrencyFromCgroupLimits starts `terraplane controller` in a cgroup limited to
// one CPU and 1 GiB of memory: without --max-concurrent-terraform it runs one terraform
// process at a time (memory decides), not two per CPU of the machine.
func TestConcurrencyFromCgroupLimits(t *testing.T) {
	g := NewWithT(t)
	if os.Geteuid() != 0 {
		t.Fatal("this test makes a cgroup, which needs root (CI runs as root)")
	}
	bin := terraplaneBinary(t)
	name := fmt.Sprintf("terraplane-test-%d", time.Now().UnixNano())
	var procs []string // cgroup.procs files to join
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		dir := filepath.Join("/sys/fs/cgroup", name)
		g.Expect(os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+cpu +memory"), 0o644)).To(Succeed())
		g.Expect(os.Mkdir(dir, 0o755)).To(Succeed())
		defer os.Remove(dir)
		g.Expect(os.WriteFile(filepath.Join(dir, "cpu.max"), []byte("100000 100000"), 0o644)).To(Succeed())
		g.Expect(os.WriteFile(filepath.Join(dir, "memory.max"), []byte("1073741824"), 0o644)).To(Succeed())
		procs = append(procs, filepath.Join(dir, "cgroup.procs"))
	} else {
		cpu, mem := filepath.Join("/sys/fs/cgroup/cpu", name), filepath.Join("/sys/fs/cgroup/memory", name)
		for _, d := range []string{cpu, mem} {
			g.Expect(os.Mkdir(d, 0o755)).To(Succeed(), "cgroup v1 hierarchies cpu and memory under /sys/fs/cgroup")
			defer os.Remove(d)
		}
		g.Expect(os.WriteFile(filepath.Join(cpu, "cpu.cfs_period_us"), []byte("100000"), 0o644)).To(Succeed())
		g.Expect(os.WriteFile(filepath.Join(cpu, "cpu.cfs_quota_us"), []byte("100000"), 0o644)).To(Succeed())
		g.Expect(os.WriteFile(filepath.Join(mem, "memory.limit_in_bytes"), []byte("1073741824"), 0o644)).To(Succeed())
		procs = append(procs, filepath.Join(cpu, "cgroup.procs"), filepath.Join(mem, "cgroup.procs"))
	}
	// The shell joins the cgroup, then becomes the controller, so it starts inside it.
	script := ""
	for _, p := range procs {
		script += fmt.Sprintf("echo $$ > %s && ", p)
	}
	script += `exec "$@"`
	cmd := exec.Command("sh", "-c", script, "sh", bin, "controller", "--kubeconfig", env.ControlPlane.Kubeconfig,
		"--workdir", t.TempDir(), "--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	stderr, err := cmd.StderrPipe()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cmd.Start()).To(Succeed())
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	found := make(chan map[string]any, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var entry map[string]any
			if json.Unmarshal(sc.Bytes(), &entry) == nil && entry["msg"] == "terraform processes capped" {
				found <- entry
			}
		}
	}()
	select {
	case entry := <-found:
		g.Expect(entry["maxConcurrentTerraform"]).To(BeNumerically("==", 1), "%v", entry)
		g.Expect(entry["from"]).To(ContainSubstring("memory limit 1024 MiB"))
	case <-time.After(2 * time.Minute):
		t.Fatal("the controller did not log its terraform cap")
	}
	// Stop the controller before its cgroups are removed.
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	// A command the controller started as it stopped (reading terraform's version, say)
	// may outlive it by a moment; nothing of it may stay.
	for _, p := range procs {
		g.Eventually(func() string {
			raw, _ := os.ReadFile(p)
			return strings.TrimSpace(string(raw))
		}, 30*time.Second, 100*time.Millisecond).Should(BeEmpty(), "processes left in %s", p)
	}
}
