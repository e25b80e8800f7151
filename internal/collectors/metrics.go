package collectors

import (
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/plugins"
	"terraplane.io/terraplane/internal/procmem"
)

// Descriptions of the engine's metrics: terraform processes, and the warm provider pool,
// per provider (its source address). Each replica has its own engine, so sum() over the
// replicas is the cluster's.
var (
	processesDesc = prometheus.NewDesc("terraplane_terraform_processes_total", "terraform processes started by the engine", nil, nil)
	providerDescs = struct{ processes, hits, misses, evictions, memory *prometheus.Desc }{
		processes: prometheus.NewDesc("terraplane_provider_processes",
			"Warm provider processes running (idle, lent, starting, or retired and still serving a run), per provider.", []string{"provider"}, nil),
		hits: prometheus.NewDesc("terraplane_provider_pool_hits_total",
			"Terraform runs lent a provider process that was already running, per provider.", []string{"provider"}, nil),
		misses: prometheus.NewDesc("terraplane_provider_pool_misses_total",
			"Provider processes started because no running one could serve a run, per provider.", []string{"provider"}, nil),
		evictions: prometheus.NewDesc("terraplane_provider_pool_evictions_total",
			"Provider processes retired: exited, past their TTL, idle too long, worn out by uses, interrupted, or over the memory budget, per provider.", []string{"provider"}, nil),
		memory: prometheus.NewDesc("terraplane_provider_memory_bytes",
			"Resident memory (RSS, from /proc) of the warm provider processes, per provider.", []string{"provider"}, nil),
	}
)

// engineSource is what the engine metrics read: an engine's counts.
type engineSource struct {
	// processes counts the terraform processes started.
	processes func() int64
	// providers is what the warm provider pool did and holds, by provider.
	providers func() map[string]plugins.ProviderStats
}

// engineCollector reports the metrics of the engine of the latest manager set up (tests
// run several managers in one process).
type engineCollector struct {
	mu  sync.Mutex
	src *engineSource
	// rss reads a process's resident memory in bytes.
	rss func(pid int) (uint64, bool)
}

// engineMetrics is the process's collector, registered once.
var engineMetrics = &engineCollector{rss: procmem.RSS}

// RegisterEngineMetrics points the engine metrics at eng: how many terraform processes it
// started, so that `make bench` (and operators) can see that steady state runs none, and
// what its warm provider pool does.
func RegisterEngineMetrics(eng *engine.Engine) error {
	engineMetrics.mu.Lock()
	engineMetrics.src = &engineSource{processes: eng.Processes, providers: eng.ProviderStats}
	engineMetrics.mu.Unlock()
	err := metrics.Registry.Register(engineMetrics)
	if errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		return nil
	}
	return err
}

// Describe sends the descriptions.
func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{processesDesc, providerDescs.processes, providerDescs.hits, providerDescs.misses,
		providerDescs.evictions, providerDescs.memory} {
		ch <- d
	}
}

// Collect reads the engine's counts and its provider processes' memory.
func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	src := c.src
	c.mu.Unlock()
	if src == nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(processesDesc, prometheus.CounterValue, float64(src.processes()))
	stats := src.providers()
	providers := make([]string, 0, len(stats))
	for p := range stats {
		providers = append(providers, p)
	}
	sort.Strings(providers)
	for _, p := range providers {
		s := stats[p]
		var rss uint64
		for _, pid := range s.PIDs {
			if n, ok := c.rss(pid); ok {
				rss += n
			}
		}
		for _, m := range []struct {
			desc  *prometheus.Desc
			typ   prometheus.ValueType
			value float64
		}{
			{providerDescs.processes, prometheus.GaugeValue, float64(s.Processes)},
			{providerDescs.hits, prometheus.CounterValue, float64(s.Hits)},
			{providerDescs.misses, prometheus.CounterValue, float64(s.Misses)},
			{providerDescs.evictions, prometheus.CounterValue, float64(s.Evictions)},
			{providerDescs.memory, prometheus.GaugeValue, float64(rss)},
		} {
			ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value, p)
		}
	}
}

// RunBuckets are the buckets, in seconds, of terraform command durations: up to the
// default command deadline (20 minutes) and beyond, for resources with a longer
// spec.timeout.
var RunBuckets = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600}

// terraformRunSeconds times every terraform command by verb, managed kind and result.
var terraformRunSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "terraplane_terraform_run_seconds",
	Help:    "Duration of terraform commands, per verb (init, plan, show, apply, output, destroy, ...; reread: a drift check answered without terraform), managed kind (and its API group) and result.",
	Buckets: RunBuckets,
}, []string{"verb", "kind", "group", "result"})

func init() { metrics.Registry.MustRegister(terraformRunSeconds) }

// ObserveRun records each terraform command in terraformRunSeconds and logs it at V(1)
// (the error is already redacted by the engine).
func ObserveRun(log logr.Logger) func(engine.Run) {
	return func(run engine.Run) {
		result := "success"
		if run.Err != nil {
			result = "error"
		}
		kind, group, _ := strings.Cut(run.Kind, ".")
		terraformRunSeconds.WithLabelValues(run.Verb, kind, group, result).Observe(run.Duration.Seconds())
		kv := []any{"verb", run.Verb, "kind", run.Kind, "resource", run.Name, "duration", run.Duration.Round(time.Millisecond).String(),
			"started", run.Started.UTC().Format(time.RFC3339Nano)}
		if run.Err != nil {
			kv = append(kv, "error", engine.Summary(run.Err))
		}
		log.V(1).Info("terraform ran", kv...)
	}
}
