package app

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/collectors"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/planpolicy"
	"terraplane.io/terraplane/internal/runner"
	"terraplane.io/terraplane/internal/statelock"
)

// NewLocal builds the terraform engine of New and the locker of its state locks:
// workspaces in opts.WorkDir, state locks through the API server, runs counted in the
// metrics, providers within the container's memory, and a burst's runs ramped up within
// its CPU.
func NewLocal(ctx context.Context, cfg *rest.Config, opts Options) (*runner.Local, error) {
	opts = withDefaults(opts, func() Limits { return ReadLimits(cgroupRoot) })
	locker, err := stateLocker(restConfig(cfg), opts.Engine.Timeout)
	if err != nil {
		return nil, err
	}
	eo := opts.Engine
	eo.WorkDir = opts.WorkDir
	eo.OnRun, eo.Log, eo.Locker = alsoOnRun(collectors.ObserveRun(ctrl.Log.WithName("terraform")), opts.Engine.OnRun), ctrl.Log.WithName("providers"), locker
	limits := ReadLimits(cgroupRoot)
	eo.ProviderMemoryBudget = providerBudget(eo.ProviderMemoryBudget, limits)
	if eo.CPU == nil {
		eo.CPU = cpuMeter(limits, cgroupRoot)
	}
	eo.CheckCreate = (&planpolicy.Cache{}).CheckCreate
	if opts.StateBackendProxy {
		if eo.StateBackend, err = stateBackend(opts.StateKubeconfig, opts.StateContext, opts.WorkDir); err != nil {
			return nil, err
		}
	}
	eng, err := engine.New(ctx, eo)
	if err != nil {
		if eo.StateBackend != nil {
			_ = eo.StateBackend.Close()
		}
		return nil, err
	}
	return &runner.Local{Engine: eng, Locker: locker}, nil
}

// stateLocker takes the state locks of this process's terraform runs, reading and writing
// their Leases straight through the API server (a cached copy would only make conflicts).
// A lock lives no longer than its command can run (its deadline and the grace after
// SIGINT), and a minute more.
func stateLocker(cfg *rest.Config, timeout time.Duration) (*statelock.Locker, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("state lock client: %w", err)
	}
	return statelock.ForEngine(c, c, timeout), nil
}

// alsoOnRun reports each run to observe, then to also when set (a test's recorder).
func alsoOnRun(observe, also func(engine.Run)) func(engine.Run) {
	if also == nil {
		return observe
	}
	return func(r engine.Run) {
		observe(r)
		also(r)
	}
}
