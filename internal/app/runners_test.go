package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunnerArgs: a runner gets the controller's engine settings as flags, and none for
// what is left at its default.
func TestRunnerArgs(t *testing.T) {
	for name, tc := range map[string]struct {
		opts Options
		want []string
	}{
		"defaults": {Options{}, []string{"--provider-reuse=false"}},
		"mirrors and downloads": {
			Options{ProviderReuse: true, ProviderMirrorURL: "https://providers.example/", ModuleRegistryURL: "https://modules.example/v1/modules/", ProviderDownload: true},
			[]string{"--provider-reuse=true", "--provider-mirror-url", "https://providers.example/", "--module-registry-url", "https://modules.example/v1/modules/", "--provider-download"},
		},
		"a memory budget": {Options{ProviderMemoryBudget: 2 << 30}, []string{"--provider-reuse=false", "--provider-memory-budget", "2147483648"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, runnerArgs(tc.opts)); diff != "" {
				t.Errorf("runnerArgs (-want +got):\n%s", diff)
			}
		})
	}
}
