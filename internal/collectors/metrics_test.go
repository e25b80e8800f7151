package collectors

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/plugins"
)

// runCount is how many runs terraformRunSeconds recorded under labels, and their total seconds.
func runCount(t *testing.T, labels ...string) (uint64, float64) {
	t.Helper()
	var m dto.Metric
	if err := terraformRunSeconds.WithLabelValues(labels...).(prometheus.Histogram).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

// TestObserveRun: each run is counted by verb, kind, group and result, and logged at V(1)
// with the error's summary, never the whole error.
func TestObserveRun(t *testing.T) {
	cases := map[string]struct {
		run     engine.Run
		labels  []string
		wantLog []string
	}{
		"a plan that worked": {engine.Run{Verb: "plan", Kind: "S3Bucket.storage.aws.terraplane.io", Name: "admin/b", Duration: 1500 * time.Millisecond},
			[]string{"plan", "S3Bucket", "storage.aws.terraplane.io", "success"}, []string{`"verb"="plan"`, `"resource"="admin/b"`, `"duration"="1.5s"`}},
		"an apply that failed": {engine.Run{Verb: "apply", Kind: "Module.terraform.terraplane.io", Name: "admin/m", Duration: 2 * time.Second,
			Err: errors.New("Error: bucket exists\n\nwith aws_s3_bucket.this")},
			[]string{"apply", "Module", "terraform.terraplane.io", "error"}, []string{`"error"=`, "bucket exists"}},
		"a kind without a group": {engine.Run{Verb: "init", Kind: "Plain", Name: "x", Duration: time.Second},
			[]string{"init", "Plain", "", "success"}, []string{`"kind"="Plain"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var logged []string
			log := funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{Verbosity: 1})
			before, sum := runCount(t, tc.labels...)
			ObserveRun(log)(tc.run)
			after, sumAfter := runCount(t, tc.labels...)
			if after != before+1 || sumAfter-sum != tc.run.Duration.Seconds() {
				t.Errorf("recorded %d runs (%gs), want one of %gs", after-before, sumAfter-sum, tc.run.Duration.Seconds())
			}
			if len(logged) != 1 {
				t.Fatalf("logged %d lines, want one", len(logged))
			}
			for _, want := range tc.wantLog {
				if !strings.Contains(logged[0], want) {
					t.Errorf("log %s lacks %s", logged[0], want)
				}
			}
			if tc.run.Err != nil && (!strings.Contains(logged[0], `"error"=`+strconv.Quote(engine.Summary(tc.run.Err))) || strings.Contains(logged[0], "\\n")) {
				t.Errorf("the log must hold the error's one-line summary: %s", logged[0])
			}
		})
	}
	var quiet []string
	ObserveRun(funcr.New(func(_, args string) { quiet = append(quiet, args) }, funcr.Options{}))(engine.Run{Verb: "plan", Kind: "X.y"})
	if len(quiet) != 0 {
		t.Errorf("a run is logged at V(0): %v", quiet)
	}
}

// TestRegisterEngineMetrics: the process counter is registered once; a second manager in
// the same process (tests) is no error.
func TestRegisterEngineMetrics(t *testing.T) {
	eng := &engine.Engine{}
	for i := range 2 {
		if err := RegisterEngineMetrics(eng); err != nil {
			t.Fatalf("registration %d: %v", i+1, err)
		}
	}
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "terraplane_terraform_processes_total" {
			if len(f.GetMetric()) != 1 || f.GetMetric()[0].GetCounter().GetValue() != 0 {
				t.Errorf("processes: %v", f.GetMetric())
			}
			return
		}
	}
	t.Error("terraplane_terraform_processes_total is not registered")
}

// TestEngineMetrics: the engine's process count, and per provider its pool's processes,
// hits, misses, evictions and the memory of its running processes.
func TestEngineMetrics(t *testing.T) {
	const aws = "registry.terraform.io/hashicorp/aws"
	rss := map[int]uint64{11: 100 << 20, 12: 150 << 20}
	c := &engineCollector{
		src: &engineSource{processes: func() int64 { return 7 }, providers: func() map[string]plugins.ProviderStats {
			return map[string]plugins.ProviderStats{aws: {Processes: 3, Hits: 40, Misses: 3, Evictions: 1, PIDs: []int{11, 12, 13}}}
		}},
		rss: func(pid int) (uint64, bool) { n, ok := rss[pid]; return n, ok },
	}
	want := map[string]float64{
		"terraplane_terraform_processes_total{}":                         7,
		"terraplane_provider_processes{provider=" + aws + "}":            3,
		"terraplane_provider_pool_hits_total{provider=" + aws + "}":      40,
		"terraplane_provider_pool_misses_total{provider=" + aws + "}":    3,
		"terraplane_provider_pool_evictions_total{provider=" + aws + "}": 1,
		"terraplane_provider_memory_bytes{provider=" + aws + "}":         250 << 20, // pid 13 has just exited
	}
	if diff := cmp.Diff(want, gather(t, c)); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
}

// TestRunBucketsReachTheDeadline: a run near the command deadline falls in a bucket of
// its own, not in +Inf.
func TestRunBucketsReachTheDeadline(t *testing.T) {
	if top := RunBuckets[len(RunBuckets)-1]; top < engine.DefaultTimeout.Seconds() {
		t.Errorf("top bucket %gs, under the %s deadline", top, engine.DefaultTimeout)
	}
	if !slices.Contains(RunBuckets, engine.DefaultTimeout.Seconds()) {
		t.Errorf("no bucket at the deadline (%gs): %v", engine.DefaultTimeout.Seconds(), RunBuckets)
	}
}
