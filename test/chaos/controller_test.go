package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"terraplane.io/terraplane/test/framework"
)

// startController runs the controller against the test's API server, appending its
// log to logPath.
func startController(t *testing.T, workDir, logPath string) *framework.Controller {
	t.Helper()
	c, err := env.StartController(bin, workDir, logPath, "--user-error-retry", "2s")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// lockReleases reads the controller log for stale locks released: how long each had
// been held, and how long after the kill that left it each was released.
func lockReleases(t *testing.T, logPath string, kills []time.Time) (held, afterKill []time.Duration) {
	err := framework.LogLines(logPath, func(line map[string]any) {
		if line["msg"] != "released a stale state lock" {
			return
		}
		if d, err := time.ParseDuration(fmt.Sprint(line["heldFor"])); err == nil {
			held = append(held, d)
		}
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(line["releasedAt"]))
		if err != nil {
			return
		}
		for i := len(kills) - 1; i >= 0; i-- {
			if kills[i].Before(at) {
				afterKill = append(afterKill, at.Sub(kills[i]))
				break
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return held, afterKill
}

// keepLog copies the controller log of a failed run to .terraplane/chaos-controller.log
// at the repository's root, where it outlives the test's directory.
func keepLog(t *testing.T, logPath string) {
	if !t.Failed() {
		return
	}
	b, err := os.ReadFile(logPath)
	if err == nil {
		kept := filepath.Join("..", "..", ".terraplane", "chaos-controller.log")
		if err = os.MkdirAll(filepath.Dir(kept), 0o755); err == nil {
			err = os.WriteFile(kept, b, 0o600)
		}
		t.Logf("the controller log is kept in %s", kept)
	}
	if err != nil {
		t.Logf("keep the controller log: %v", err)
	}
}
