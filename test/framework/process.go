package framework

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Controller is a `terraplane controller` process a test started against its API server.
type Controller struct {
	cmd *exec.Cmd
	// Started is when it was started.
	Started time.Time
}

// StartController runs bin's controller against the Env's API server with its own
// workspace directory, appending its log to logPath after a line that marks the start.
func (e *Env) StartController(bin, workDir, logPath string, args ...string) (*Controller, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	kc := e.ControlPlane.Kubeconfig
	args = append([]string{"controller", "--kubeconfig", kc, "--state-kubeconfig", kc, "--workdir", workDir,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	c := &Controller{cmd: cmd, Started: time.Now()}
	fmt.Fprintf(log, "{\"test\":\"start\",\"at\":%d}\n", c.Started.UnixNano())
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start controller: %w", err)
	}
	return c, nil
}

// Kill SIGKILLs the controller (its terraform children die with it) and reaps it.
func (c *Controller) Kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()
}

// Stop sends SIGTERM and waits, as a pod eviction does.
func (c *Controller) Stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	_ = c.cmd.Wait()
}

// BuildTerraplane builds the terraplane binary into dir, for tests that run it as its
// own process.
func BuildTerraplane(dir string) (string, error) {
	bin := filepath.Join(dir, "terraplane")
	build := exec.Command("go", "build", "-o", bin, "terraplane.io/terraplane/cmd/terraplane")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build terraplane: %w", err)
	}
	return bin, nil
}

// LogLines calls each for every JSON line of a controller log (other lines are skipped).
func LogLines(path string, each func(line map[string]any)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil {
			each(line)
		}
	}
	return sc.Err()
}

var (
	builtOnce sync.Once
	built     string
	buildErr  error
)

// TerraplaneBinary builds the terraplane binary once per test binary, for tests that run
// it as its own process (runners, controllers).
func TerraplaneBinary() (string, error) {
	builtOnce.Do(func() {
		dir, err := os.MkdirTemp("", "terraplane-bin-")
		if err != nil {
			buildErr = err
			return
		}
		built, buildErr = BuildTerraplane(dir)
	})
	return built, buildErr
}
