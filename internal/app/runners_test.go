package app

import (
	"terraplane.io/terraplane/internal/engine"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRunnerArgs: runners get the controller's settings that bound their runs, the
// terraform deadline among them (a workspace's own spec.timeout still overrides it), and
// no flag for a setting left at its default.
func TestRunnerArgs(t *testing.T) {
	for name, tc := range map[string]struct {
		opts Options
		want []string
	}{
		"defaults": {Options{}, []string{"--provider-reuse=false"}},
		"mirrors": {
			Options{Engine: engine.Options{NetworkMirror: "https://providers.example/", ModuleRegistryURL: "https://modules.example/v1/modules/"}},
			[]string{"--provider-reuse=false", "--provider-mirror-url", "https://providers.example/", "--module-registry-url", "https://modules.example/v1/modules/"}},
		"a terraform deadline": {Options{Engine: engine.Options{ProviderReuse: true, Timeout: 45 * time.Minute}},
			[]string{"--provider-reuse=true", "--terraform-timeout", "45m0s"}},
		"provider settings and a deadline": {
			Options{Engine: engine.Options{ProviderTTL: time.Hour, ProviderRunsPerProcess: 4, ProviderMemoryBudget: 1 << 30, AllowDirect: true, Timeout: time.Hour}},
			[]string{"--provider-reuse=false", "--provider-ttl", "1h0m0s", "--terraform-timeout", "1h0m0s",
				"--provider-runs-per-process", "4", "--provider-memory-budget", "1073741824", "--provider-download"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runnerArgs(tc.opts)); diff != "" {
				t.Errorf("runnerArgs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProcessIdleTTL: the controller's idle TTL of 0 (never stop) reaches runner
// processes as their "for ever" (-1), not as their 0, which would mean their default.
func TestProcessIdleTTL(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{0: -1, -1: -1, 90 * time.Second: 90 * time.Second} {
		if got := processIdleTTL(in); got != want {
			t.Errorf("processIdleTTL(%s) = %s, want %s", in, got, want)
		}
	}
}
