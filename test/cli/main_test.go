// Package cli runs the terraplane binary the way a user does, as a process: its exit
// codes, its stderr, and the controller command against a real API server with real
// terraform.
package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
)

var (
	// bin is the terraplane binary, built once.
	bin string
	env *framework.Env
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("cli: skipped in -short mode")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "terraplane-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cli:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "terraplane")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/terraplane").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "cli: build terraplane: %v\n%s", err, out)
		return 1
	}
	if _, err := framework.TerraformVersion(); err != nil {
		fmt.Fprintln(os.Stderr, "cli:", err)
		return 1
	}
	if env, err = framework.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "cli:", err)
		return 1
	}
	defer env.Stop()
	return m.Run()
}

// result is what one run of the binary gave.
type result struct {
	stdout, stderr string
	code           int
}

// userEnv is a user's environment with no kubeconfig anywhere: an empty home, no
// KUBECONFIG, not in a pod; extra adds to it.
func userEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	return append([]string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"TERRAPLANE_CACHE=" + devenv.CacheDir(),
		"TERRAPLANE_TERRAFORM=" + os.Getenv("TERRAPLANE_TERRAFORM"),
		"CHECKPOINT_DISABLE=1",
	}, extra...)
}

// terraplane runs the binary with environ and waits for it.
func terraplane(t *testing.T, environ []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = environ
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if took := time.Since(start); took > 3*time.Second {
		t.Logf("terraplane %s took %s", strings.Join(args, " "), took.Round(100*time.Millisecond))
	}
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if exit, ok := err.(*exec.ExitError); ok {
		r.code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("terraplane %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// controller is `terraplane controller` running as its own process.
type controller struct {
	cmd  *exec.Cmd
	logs *bytes.Buffer
	done chan error
}

// startController starts `terraplane controller` with args; it is stopped (SIGTERM) when
// the test ends, and its logs are shown if the test failed.
func startController(t *testing.T, environ []string, args ...string) *controller {
	t.Helper()
	args = append([]string{"controller", "--workdir", t.TempDir(), "--metrics-bind-address", "0", "--health-probe-bind-address", "0",
		"--terraform", framework.TerraformBinary(), "--user-error-retry", "2s"}, args...)
	c := &controller{cmd: exec.Command(bin, args...), logs: &bytes.Buffer{}, done: make(chan error, 1)}
	c.cmd.Env = environ
	c.cmd.Stdout, c.cmd.Stderr = c.logs, c.logs
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(time.Minute):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			t.Logf("controller logs:\n%s", c.logs.String())
		}
	})
	return c
}

// exited reports whether the controller has stopped (it should not have).
func (c *controller) exited() bool {
	select {
	case err := <-c.done:
		c.done <- err
		return true
	default:
		return false
	}
}
