package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
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
