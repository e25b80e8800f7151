package app

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"terraplane.io/terraplane/controllers/terraform"
	"terraplane.io/terraplane/internal/runner"
)

// Where terraform runs (Options.Runner).
const (
	// RunnerInProcess runs terraform in the controller's process, with its identity: for
	// single-user installs.
	RunnerInProcess = "in-process"
	// RunnerProcess runs terraform in a runner process per pool, with the pool's
	// identity (and, when the controller runs as root, a uid of its own).
	RunnerProcess = "process"
)

// runnerOf is what runs terraform for the Terraform Connector: local, or the runner
// processes of the pools, stopped with the manager.
func runnerOf(mgr ctrl.Manager, cfg *rest.Config, opts Options, local *runner.Local) (terraform.Runner, error) {
	switch opts.Runner {
	case "", RunnerInProcess:
		return local, nil
	case RunnerProcess:
	default:
		return nil, fmt.Errorf("--runner %q: want %s or %s", opts.Runner, RunnerInProcess, RunnerProcess)
	}
	bin := opts.RunnerBinary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("runner binary: %w", err)
		}
	}
	tokens, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("runner tokens: %w", err)
	}
	// The runners' directories may not be inside the controller's work directory, which
	// only the controller may enter.
	dir, err := os.MkdirTemp("", "terraplane-runners-")
	if err != nil {
		return nil, fmt.Errorf("runner directory: %w", err)
	}
	procs := &runner.Processes{Binary: bin, Dir: dir, RemoveOnStop: true, Config: cfg, PluginMirror: opts.PluginMirror,
		Terraform:  local.Engine.TerraformPath(),
		Identities: &runner.Identities{Client: mgr.GetClient(), Tokens: tokens, EnsureRole: true},
		Args:       runnerArgs(opts), OnRun: observeRun(ctrl.Log.WithName("terraform")), Log: ctrl.Log.WithName("runners")}
	pools := &runner.Pools{Launcher: procs}
	// runners end with the manager; their runs get their grace period to write their state
	err = mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { <-ctx.Done(); pools.Stop(); return nil }))
	return pools, err
}

// runnerArgs are the flags every runner gets from the controller's options.
func runnerArgs(opts Options) []string {
	args := []string{"--provider-reuse=" + strconv.FormatBool(opts.ProviderReuse)}
	add := func(flag, value string) {
		if value != "" && value != "0" && value != "0s" {
			args = append(args, flag, value)
		}
	}
	add("--provider-mirror-url", opts.ProviderMirrorURL)
	add("--module-registry-url", opts.ModuleRegistryURL)
	add("--max-concurrent-terraform", strconv.Itoa(opts.MaxConcurrentTerraform))
	add("--provider-ttl", opts.ProviderTTL.String())
	add("--terraform-timeout", opts.TerraformTimeout.String())
	add("--provider-runs-per-process", strconv.Itoa(opts.ProviderRunsPerProcess))
	if opts.ProviderMemoryBudget > 0 {
		args = append(args, "--provider-memory-budget", strconv.FormatInt(opts.ProviderMemoryBudget, 10))
	}
	if opts.ProviderDownload {
		args = append(args, "--provider-download")
	}
	return args
}
