package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// controller is one `terraplane controller` process.
type controller struct {
	cmd     *exec.Cmd
	started time.Time
}

// startController runs the controller against the test's API server, appending its
// log to logPath after a line that marks the start.
func startController(t *testing.T, workDir, logPath string) *controller {
	t.Helper()
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	kc := env.ControlPlane.Kubeconfig
	cmd := exec.Command(bin, "controller", "--kubeconfig", kc, "--state-kubeconfig", kc, "--workdir", workDir,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--user-error-retry", "2s")
	cmd.Stdout, cmd.Stderr = log, log
	c := &controller{cmd: cmd, started: time.Now()}
	fmt.Fprintf(log, "{\"chaos\":\"start\",\"at\":%d}\n", c.started.UnixNano())
	if err := cmd.Start(); err != nil {
		t.Fatalf("start controller: %v", err)
	}
	return c
}

// kill SIGKILLs the controller (its terraform children die with it) and reaps it.
func (c *controller) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
}

// stop sends SIGTERM and waits, as a pod eviction does.
func (c *controller) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	_ = c.cmd.Wait()
}

// lockReleases reads the controller log for stale locks released: how long each had
// been held, and how long after the kill that left it each was released.
func lockReleases(t *testing.T, logPath string, kills []time.Time) (held, afterKill []time.Duration) {
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if line["msg"] != "released a stale state lock" {
			continue
		}
		if d, err := time.ParseDuration(fmt.Sprint(line["heldFor"])); err == nil {
			held = append(held, d)
		}
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(line["releasedAt"]))
		if err != nil {
			continue
		}
		for i := len(kills) - 1; i >= 0; i-- {
			if kills[i].Before(at) {
				afterKill = append(afterKill, at.Sub(kills[i]))
				break
			}
		}
	}
	return held, afterKill
}
