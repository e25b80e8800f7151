package collectors

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/procmem"
	"terraplane.io/terraplane/internal/runner"
)

// HopBuckets are the buckets, in seconds, of the time a run sent to a runner spends
// getting there and back: a local socket takes about a millisecond, a Service in the
// cluster a few, a workspace with large files more.
var HopBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// The controller's metrics of the runs it sends to runner pools (--runner process or
// deployment), per pool (namespace/name) and verb.
var (
	runnerRunsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "terraplane_runner_runs_total",
		Help: "Runs sent to runner pools, per pool (namespace/name), verb (create, plan, apply-plan, outputs, destroy, ...) and result: success, error (the run failed), or unreachable (the runner did not answer).",
	}, []string{"pool", "verb", "result"})
	runnerHopSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "terraplane_runner_hop_seconds",
		Help:    "Time a run sent to a runner pool spent on the way, per pool and verb: the controller's wait less the runner's time on the run (the request, the reply, their encoding).",
		Buckets: HopBuckets,
	}, []string{"pool", "verb"})
)

func init() { metrics.Registry.MustRegister(runnerRunsTotal, runnerHopSeconds) }

// ObserveCall records a run sent to pool's runner in the runner metrics.
func ObserveCall(pool runner.PoolRef, c runner.Call) {
	result := "success"
	switch {
	case c.Unreachable():
		result = "unreachable"
	case c.Err != nil:
		result = "error"
	}
	runnerRunsTotal.WithLabelValues(pool.String(), c.Verb, result).Inc()
	if result != "unreachable" {
		runnerHopSeconds.WithLabelValues(pool.String(), c.Verb).Observe(c.Hop().Seconds())
	}
}

// RunnerMetrics is what a runner of pool (namespace/name) serves on its metrics
// endpoint: its engine's terraform processes and warm provider pool (the series the
// controller's in-process engine exports), its own process and Go runtime, each series
// labelled with the pool.
func RunnerMetrics(eng *engine.Engine, pool string) http.Handler {
	reg := prometheus.NewRegistry()
	labelled := prometheus.WrapRegistererWith(prometheus.Labels{"pool": pool}, reg)
	labelled.MustRegister(&engineCollector{src: &engineSource{processes: eng.Processes, providers: eng.ProviderStats}, rss: procmem.RSS},
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
