package plugins

import (
	"runtime"
	"strconv"
	"testing"
)

// TestProviderEnv: a provider process is sized to the cores this process may use,
// unless the workspace's environment says otherwise, and the environment given is
// never changed (it is part of the processes' key).
func TestProviderEnv(t *testing.T) {
	given := map[string]string{"AWS_REGION": "eu-west-1"}
	got := providerEnv(given)
	if want := strconv.Itoa(runtime.GOMAXPROCS(0)); got["GOMAXPROCS"] != want || got["AWS_REGION"] != "eu-west-1" {
		t.Errorf("environment %v, want GOMAXPROCS=%s beside AWS_REGION", got, want)
	}
	if _, changed := given["GOMAXPROCS"]; changed {
		t.Error("the given environment was changed")
	}
	if got := providerEnv(map[string]string{"GOMAXPROCS": "3"}); got["GOMAXPROCS"] != "3" {
		t.Errorf("GOMAXPROCS %q, want the workspace's 3", got["GOMAXPROCS"])
	}
	if got := providerEnv(nil); got["GOMAXPROCS"] == "" {
		t.Error("no GOMAXPROCS for an empty environment")
	}
}
