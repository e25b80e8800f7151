package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"terraplane.io/terraplane/controllers/terraform"
	"terraplane.io/terraplane/internal/collectors"
	"terraplane.io/terraplane/internal/engineflags"
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
	// RunnerDeployment runs terraform in a runner Deployment per pool, in the pool's
	// namespace, with the pool's ServiceAccount: the in-cluster form of RunnerProcess.
	RunnerDeployment = "deployment"
)

// runnerOf is what runs terraform for the Terraform Connector: local, or the runner
// processes of the pools, stopped with the manager.
func runnerOf(mgr ctrl.Manager, cfg *rest.Config, opts Options, local *runner.Local) (terraform.Runner, error) {
	switch opts.Runner {
	case "", RunnerInProcess:
		return local, nil
	case RunnerProcess:
	case RunnerDeployment:
		return runnerDeployments(mgr, opts, local)
	default:
		return nil, fmt.Errorf("--runner %q: want %s, %s or %s", opts.Runner, RunnerInProcess, RunnerProcess, RunnerDeployment)
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
	direct, err := runnerObjectsClient(mgr)
	if err != nil {
		return nil, err
	}
	procs := &runner.Processes{Binary: bin, Dir: runner.ProcessDir(opts.WorkDir), RemoveOnStop: true, Config: cfg, PluginMirror: opts.Engine.PluginMirror,
		Terraform:  local.Engine.TerraformPath(),
		Identities: &runner.Identities{Client: direct, Tokens: tokens, EnsureRole: true},
		Args:       runnerArgs(opts), OnRun: collectors.ObserveRun(ctrl.Log.WithName("terraform")), OnCall: collectors.ObserveCall, Log: ctrl.Log.WithName("runners"),
		MetricsAddress: "127.0.0.1:0", MetricsTargets: opts.RunnerMetricsTargets,
		UIDTable: filepath.Join(opts.WorkDir, "runner-uids.json"), SharedUID: opts.RunnerInsecureSharedUID,
		MaxPoolsPerNamespace: opts.RunnerMaxPoolsPerNamespace, IdleTTL: processIdleTTL(opts.RunnerIdleTTL)}
	if err := procs.Check(); err != nil {
		return nil, err
	}
	pools := &runner.Pools{Launcher: procs}
	// runners end with the manager; their runs get their grace period to write their state
	err = mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { <-ctx.Done(); pools.Stop(); return nil }))
	return pools, err
}

// runnerDeployments runs each pool's runner as a Deployment in the pool's namespace, from
// the controller's image, with the controller's terraform and provider mirror paths.
func runnerDeployments(mgr ctrl.Manager, opts Options, local *runner.Local) (terraform.Runner, error) {
	if opts.RunnerImage == "" {
		return nil, fmt.Errorf("--runner %s needs --runner-image, the terraplane image the runners run", RunnerDeployment)
	}
	res, err := runnerResources(opts)
	if err != nil {
		return nil, err
	}
	settings, err := runnerPodSettings(opts.RunnerPod)
	if err != nil {
		return nil, err
	}
	direct, err := runnerObjectsClient(mgr)
	if err != nil {
		return nil, err
	}
	deps := &runner.Deployments{Client: direct, Identities: &runner.Identities{Client: direct, EnsureRole: true},
		Pod: runner.PodSpec{Image: opts.RunnerImage, Terraform: local.Engine.TerraformPath(), PluginMirror: opts.Engine.PluginMirror,
			Resources: res, Args: runnerArgs(opts), Settings: settings},
		OnRun: collectors.ObserveRun(ctrl.Log.WithName("terraform")), OnCall: collectors.ObserveCall,
		IdleTTL: opts.RunnerIdleTTL, MaxPoolsPerNamespace: opts.RunnerMaxPoolsPerNamespace, Namespaces: opts.SecretNamespaces, Log: ctrl.Log.WithName("runners")}
	// every replica looks for idle runners, the leader or not: each stamps the runners
	// it has runs in flight on, which keeps the others from scaling them down
	if err := mgr.Add(everyReplica{manager.RunnableFunc(deps.Reap)}); err != nil {
		return nil, err
	}
	return &runner.Pools{Launcher: deps}, nil
}

// runnerObjectsClient reads and writes the runners' objects (ServiceAccounts,
// RoleBindings, Secrets, Services, Deployments) straight from the API server: the
// controller may touch them only in the namespaces it serves, so a cached read, which
// watches a kind cluster-wide, would be forbidden and never sync.
func runnerObjectsClient(mgr ctrl.Manager) (client.Client, error) {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("runner objects client: %w", err)
	}
	return c, nil
}

// runnerArgs are the flags every runner gets from the controller's options.
func runnerArgs(opts Options) []string { return engineflags.Args(opts.Engine) }

// RunnerRestConfig is the API client configuration of a runner (its pool's identity),
// with the controller's rate limits: a runner's state locks for many runs at once must
// not queue behind client-go's default of 5 requests a second.
func RunnerRestConfig(cfg *rest.Config) *rest.Config { return restConfig(cfg) }

// everyReplica is a runnable every replica runs, elected or not.
type everyReplica struct{ manager.RunnableFunc }

// NeedLeaderElection is false: every replica runs it.
func (everyReplica) NeedLeaderElection() bool { return false }

// processIdleTTL is a runner process's idle lifetime for runner.Processes, which reads 0
// as its default: the controller's 0 (never) is its "for ever".
func processIdleTTL(ttl time.Duration) time.Duration {
	if ttl == 0 {
		return -1
	}
	return ttl
}
