package engineflags

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/pflag"

	"terraplane.io/terraplane/internal/engine"
)

// TestArgsRoundTrip: the arguments derived from settings, parsed by Bind's flags, give the
// same settings back (but for the paths, which are the runner's own).
func TestArgsRoundTrip(t *testing.T) {
	want := engine.Options{NetworkMirror: "https://providers.example/", ModuleRegistryURL: "https://modules.example/v1/modules/",
		MaxConcurrent: 3, Timeout: 45 * time.Minute, ProviderReuse: true, ProviderTTL: time.Hour, ProviderRunsPerProcess: 4,
		ProviderMemoryBudget: 1 << 30, AllowDirect: true}
	var got engine.Options
	fs := pflag.NewFlagSet("runner", pflag.ContinueOnError)
	Bind(fs, &got)
	if err := fs.Parse(Args(want)); err != nil {
		t.Fatal(err)
	}
	got.PluginMirror = ""
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(engine.Options{}, "Log", "OnRun", "Locker")); d != "" {
		t.Errorf("settings after the round trip (-want +got):\n%s", d)
	}
}

// TestBytes: sizes are quantities, and only positive ones.
func TestBytes(t *testing.T) {
	var n int64
	b := Bytes(&n)
	if err := b.Set("2Gi"); err != nil || n != 2<<30 || b.String() != "2Gi" {
		t.Errorf("2Gi: %d, %v, %s", n, err, b.String())
	}
	for _, bad := range []string{"0", "-1Mi", "lots"} {
		if err := b.Set(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestBindDefaults: with no flags given, the settings are the engine's defaults: the
// default mirror, the default deadline, and warm providers.
func TestBindDefaults(t *testing.T) {
	t.Setenv("TERRAPLANE_CACHE", "/opt/terraplane")
	var o engine.Options
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	Bind(fs, &o)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if o.PluginMirror != "/opt/terraplane/providers" || o.Timeout != engine.DefaultTimeout || !o.ProviderReuse || o.MaxConcurrent != 0 {
		t.Errorf("defaults: mirror %q, timeout %s, reuse %v, max %d", o.PluginMirror, o.Timeout, o.ProviderReuse, o.MaxConcurrent)
	}
}
