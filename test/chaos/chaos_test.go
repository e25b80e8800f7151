package chaos

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"terraplane.io/terraplane/test/framework"
)

var (
	kills = flag.Int("kills", envInt("CHAOS_KILLS", 30), "how many times the controller is SIGKILLed")
	seed  = flag.Uint64("seed", uint64(envInt("CHAOS_SEED", 20261124)), "seed of the random kill moments and scenario")
	count = flag.Int("resources", envInt("CHAOS_RESOURCES", 8), "how many Modules the scenario starts with (one more is created each round)")
)

var (
	env *framework.Env
	bin string
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("chaos: skipped in -short mode")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "terraplane-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if bin, err = framework.BuildTerraplane(dir); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	if env, err = framework.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	defer env.Stop()
	return m.Run()
}

// rng is the scenario's random source, from the printed seed.
func rng(t *testing.T) *rand.Rand {
	t.Logf("chaos seed %d (rerun with CHAOS_SEED=%d or -seed %d), %d kills, %d resources", *seed, *seed, *seed, *kills, *count)
	return rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15))
}

// within bounds a wait by the test's deadline.
func within(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := t.Deadline(); ok && time.Until(dl)-30*time.Second < d {
		d = time.Until(dl) - 30*time.Second
	}
	return context.WithTimeout(context.Background(), d)
}
