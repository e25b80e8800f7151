package app

import (
	"errors"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"terraplane.io/terraplane/internal/engine"
)

// registerEngineMetrics exposes how many terraform processes the engine started, so that
// `make bench` (and operators) can see that steady state runs none.
func registerEngineMetrics(eng *engine.Engine) error {
	c := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "terraplane_terraform_processes_total",
		Help: "terraform processes started by the engine",
	}, func() float64 { return float64(eng.Processes()) })
	err := metrics.Registry.Register(c)
	var exists prometheus.AlreadyRegisteredError
	if errors.As(err, &exists) {
		return nil // several managers in one process (tests): the first one reports
	}
	return err
}

// terraformRunSeconds times every terraform command by verb, managed kind and result.
var terraformRunSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
	Name:    "terraplane_terraform_run_seconds",
	Help:    "Duration of terraform commands, per verb (init, plan, show, apply, output, destroy, ...), managed kind (and its API group) and result.",
	Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600},
}, []string{"verb", "kind", "group", "result"})

func init() { metrics.Registry.MustRegister(terraformRunSeconds) }

// observeRun records each terraform command in terraformRunSeconds and logs it at V(1)
// (the error is already redacted by the engine).
func observeRun(log logr.Logger) func(engine.Run) {
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
