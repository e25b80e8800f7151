package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"terraplane.io/terraplane/controllers/claim"
	"terraplane.io/terraplane/controllers/classrevision"
	"terraplane.io/terraplane/controllers/kubernetes"
	"terraplane.io/terraplane/controllers/moduleclass"
	"terraplane.io/terraplane/controllers/provider"
	"terraplane.io/terraplane/controllers/scheduler"
	"terraplane.io/terraplane/controllers/terraform"
	"terraplane.io/terraplane/controllers/workload"
	"terraplane.io/terraplane/internal/cacheread"
	"terraplane.io/terraplane/internal/collectors"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/runner"
	"terraplane.io/terraplane/internal/shard"
)

// Options configure the manager.
type Options struct {
	// Engine are the terraform engine's settings (engineflags binds those the controller
	// and its runners share); New fills in what it injects: the work directory (WorkDir),
	// the state locker, the run observer and the logger. MaxConcurrent 0 is derived from the container's CPU quota
	// and memory limit (DefaultMaxConcurrentTerraform), ProviderMemoryBudget 0 from its
	// memory limit, and MaxConcurrentPerGroup caps terraform processes per Provider.
	Engine engine.Options
	// WorkDir holds the Terraform workspaces (disposable: state lives in the cluster).
	WorkDir string
	// StateKubeconfig is the kubeconfig terraform's state backend uses (one path, or
	// several joined as in $KUBECONFIG); empty means in-cluster.
	StateKubeconfig string
	// StateContext is the context of StateKubeconfig to use; empty means its current one.
	StateContext string
	// StateBackendProxy has terraform's state backend reach the API server through this
	// process's loopback proxy, which reads a state by its name (backendproxy), rather
	// than talk to it itself.
	StateBackendProxy bool
	// MaxConcurrentReconciles per kind; 0 means 10.
	MaxConcurrentReconciles int
	// MaxCreatingPerNamespace caps the new resources of one namespace's claims that wait
	// for their first apply at once; the claims beyond wait their turn, the oldest first.
	// 0 means twice the terraform processes of all replicas, less than 0 no cap.
	MaxCreatingPerNamespace int
	// DriftInterval between plans of unchanged resources, unless a resource's
	// spec.driftInterval says otherwise.
	DriftInterval time.Duration
	// UserErrorRetry is how soon a resource stopped by bad input is looked at again.
	UserErrorRetry time.Duration
	// MetricsAddr serves Prometheus metrics; "0" disables.
	MetricsAddr string
	// MetricsSecure serves metrics over HTTPS behind Kubernetes authn/authz.
	MetricsSecure bool
	// HealthAddr serves /healthz and /readyz; "0" disables.
	HealthAddr string
	// PprofAddr serves Go's profiles (/debug/pprof/); empty or "0" disables.
	PprofAddr string
	// ModuleSourceAllow lists the git URLs and OCI repositories module sources may use,
	// each with what lies below it (modsource.ValidateAllowList); empty allows any.
	ModuleSourceAllow []string
	// AllowInsecureModuleSources lets git module sources use http:// and file://.
	AllowInsecureModuleSources bool
	// ModuleSourceMaxFetch caps what one git fetch of a module source may bring, in bytes;
	// 0 means modsource.DefaultMaxFetchBytes.
	ModuleSourceMaxFetch int64
	// BundledModulesDir holds modules the bundled kinds are rendered from instead of
	// those built in, laid out the same way (postgresql/database, aws/s3bucket, ...): a
	// patched module served without a new release. Empty keeps the built-in ones.
	BundledModulesDir string
	// DisableStackManager leaves out the stack manager (StackInstall, ClusterStackInstall,
	// Stack, and the CRDs and roles of ClaimDefinitions), which needs the permissions of
	// controllers/stack/rbac.go: the controller then only serves the kinds ClaimDefinitions
	// define once a stack manager of its own (NewStackManager) has made them.
	DisableStackManager bool
	// StackManagerOnly is set by NewStackManager: the manager runs the stack manager alone.
	StackManagerOnly bool
	// LeaderElection makes only one replica reconcile.
	LeaderElection bool
	// LeaderElectionNamespace holds the election Lease, and the shard Leases.
	LeaderElectionNamespace string
	// Shards splits the managed resources into this many shards, shared out between
	// the replicas through Leases; 0 means no sharding. Sharding elects a leader for
	// everything else (claims, classes, Kubernetes-native kinds, stacks).
	Shards int
	// ShardIdentity names this replica among the shard holders (the pod name).
	ShardIdentity string
	// ShardLeaseDuration is how long a dead replica's shards wait before another takes
	// them; 0 means shard.DefaultLeaseDuration.
	ShardLeaseDuration time.Duration
	// StackRegistry is the OCI registry that stack installs without spec.source use.
	StackRegistry string
	// StackTagRefresh is how often a stack install by tag looks its tag up again; 0 means
	// stack.DefaultTagRefresh, a negative value never.
	StackTagRefresh time.Duration
	// ModuleSourceRefresh is how often a module source that names a branch, a tag or an
	// OCI tag is looked up again; 0 means modsource.DefaultRefreshInterval.
	ModuleSourceRefresh time.Duration
	// Runner says where terraform runs: RunnerInProcess (this process, with its
	// identity), RunnerProcess (a runner process per pool, with the pool's identity) or
	// RunnerDeployment (a runner Deployment per pool); empty means RunnerInProcess.
	Runner string
	// RunnerBinary is the terraplane binary runner processes run; empty means this one.
	RunnerBinary string
	// RunnerMetricsTargets, with RunnerProcess, is a file kept listing the runner
	// processes' metrics endpoints (each on a free port of 127.0.0.1), in Prometheus'
	// file-based service discovery format; empty writes none.
	RunnerMetricsTargets string
	// RunnerInsecureSharedUID, with RunnerProcess, accepts that a controller that is
	// not root runs every pool's runner as its own uid (pools then not kept apart).
	RunnerInsecureSharedUID bool
	// RunnerMaxPoolsPerNamespace caps the runners (processes, or Deployments scaled up)
	// one namespace runs at once; 0 means runner.DefaultMaxPoolsPerNamespace, less than 0
	// no cap.
	RunnerMaxPoolsPerNamespace int
	// RunnerImage is the terraplane image runner Deployments run (RunnerDeployment).
	RunnerImage string
	// RunnerCPU and RunnerMemory are each runner Deployment's resource limits, as
	// quantities (empty sets none); it requests less (runnerRequests).
	RunnerCPU, RunnerMemory string
	// RunnerPod is a JSON object of runner.PodSettings: the pod settings runner
	// Deployments take from the install (pull secrets, environment, volumes, scheduling,
	// resources); empty sets none.
	RunnerPod string
	// RunnerIdleTTL is how long a runner goes without a run before it stops (a runner
	// process) or is scaled to zero (a runner Deployment); its pool's next run starts it
	// again. 0 means never.
	RunnerIdleTTL time.Duration
	// SecretNamespaces are the namespaces whose Secrets the controller reads, writes and
	// watches (the chart grants it Secrets there only); empty means every namespace.
	SecretNamespaces []string
	// AllowKubeconfigExec lets kubeconfigs read from Secrets run commands (exec,
	// auth-provider) and read files inside the controller; off, they are refused
	// (UnsafeKubeconfig).
	AllowKubeconfigExec bool
	// PolicyWebhook serves the admission webhook that refuses plan policies whose rules
	// do not compile (webhook.go); nil serves none, and such a policy is then only
	// reported (InvalidExpression).
	PolicyWebhook *WebhookOptions
}

// cachedSecrets selects the Secrets the controller reads through its cache: not the ones
// the kubernetes state backend writes, nor the saved plans (both hold every secret value
// of a workspace, and are read only when needed).
var cachedSecrets = func() labels.Selector {
	notState, err := labels.NewRequirement("tfstate", selection.NotEquals, []string{"true"})
	if err != nil {
		panic(err)
	}
	notPlan, err := labels.NewRequirement(resource.PlanLabel, selection.DoesNotExist, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*notState, *notPlan)
}()

// New builds a manager with every Terraplane controller registered, and the terraform
// engine they run on, which stops with the manager.
func New(ctx context.Context, cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	local, err := NewLocal(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	mgr, err := Compose(ctx, cfg, opts, local)
	if err != nil {
		local.Engine.Stop()
	}
	return mgr, err
}

// Compose builds a manager with every Terraplane controller registered, running
// terraform on local (NewLocal) or on runners, and stopping local's engine when it stops.
func Compose(ctx context.Context, cfg *rest.Config, opts Options, local *runner.Local) (ctrl.Manager, error) {
	eng := local.Engine
	opts = withDefaults(opts, func() Limits { return ReadLimits(cgroupRoot) })
	cfg = restConfig(cfg)
	if err := modsource.ValidateAllowList(opts.ModuleSourceAllow); err != nil {
		return nil, err
	}
	loader := &modsource.Loader{CacheDir: filepath.Join(opts.WorkDir, ".modules"), AllowedSources: opts.ModuleSourceAllow,
		AllowInsecure: opts.AllowInsecureModuleSources, MaxFetchBytes: opts.ModuleSourceMaxFetch, RefreshInterval: opts.ModuleSourceRefresh}
	reg := kinds.NewRegistry(loader)
	if opts.BundledModulesDir != "" {
		if _, err := os.Stat(filepath.Join(opts.BundledModulesDir, "postgresql", "database")); err != nil {
			return nil, fmt.Errorf("bundled modules dir: want the built-in modules' layout: %w", err)
		}
		modules := os.DirFS(opts.BundledModulesDir)
		for _, k := range reg.TerraformKinds() {
			if k.Terraform.Modules != nil {
				k.Terraform.Modules = modules
			}
		}
	}
	mgr, err := ctrl.NewManager(cfg, managerOptions(opts, reg.Scheme()))
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	// Provider processes end with the manager; those still in use, as their runs end.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { <-ctx.Done(); eng.Stop(); return nil })); err != nil {
		return nil, err
	}
	if err := collectors.RegisterEngineMetrics(eng); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	shards, err := shards(mgr, cfg, opts)
	if err != nil {
		return nil, err
	}
	var holds func(types.UID) bool
	if shards != nil {
		holds = shards.Holds
	}
	if err := collectors.RegisterObjectGauges(cacheread.Source{Informers: mgr.GetCache(), Reader: mgr.GetClient()}, reg, mgr.Elected(), holds, terraform.DriftInterval(opts.DriftInterval)); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	runs, err := runnerOf(mgr, cfg, opts, local)
	if err != nil {
		return nil, err
	}
	policies, err := setupPolicies(ctx, mgr, cfg, opts)
	if err != nil {
		return nil, err
	}
	err = terraform.Setup(mgr, reg, terraform.Options{Policies: policies,
		Runner: runs, KubeconfigPath: opts.StateKubeconfig, KubeconfigContext: opts.StateContext, DriftInterval: opts.DriftInterval,
		StateFromEnvironment: opts.Runner == RunnerProcess || opts.Runner == RunnerDeployment || eng.ServesStateBackend(),
		UserErrorRetry:       opts.UserErrorRetry, MaxConcurrentReconciles: opts.MaxConcurrentReconciles, Shards: shards,
	})
	if err != nil {
		return nil, err
	}
	claims, err := claim.Setup(mgr, reg, claim.Options{UserErrorRetry: opts.UserErrorRetry, MaxConcurrentReconciles: opts.MaxConcurrentReconciles,
		Placement: scheduler.FirstConsumers{Client: mgr.GetClient()}, Intake: intakeGate(opts, shards)})
	if err != nil {
		return nil, err
	}
	if err := claimDefinitions(mgr, loader, reg, claims, opts); err != nil {
		return nil, err
	}
	if err := setupResourcePools(mgr, reg, opts); err != nil {
		return nil, err
	}
	if err := provider.Setup(mgr, reg); err != nil {
		return nil, fmt.Errorf("set up provider usage controllers: %w", err)
	}
	sources := module.ProviderSources{Mirror: opts.Engine.PluginMirror, NetworkMirror: opts.Engine.NetworkMirror, Direct: opts.Engine.AllowDirect,
		Host: module.RegistryHost(opts.Engine.TerraformPath)}
	if err := moduleclass.Setup(mgr, loader, moduleclass.WithProviderSources(sources)); err != nil {
		return nil, fmt.Errorf("set up ModuleClass controller: %w", err)
	}
	if err := classrevision.Setup(mgr, reg); err != nil {
		return nil, fmt.Errorf("set up class revision controllers: %w", err)
	}
	if !opts.DisableStackManager {
		if err := setupStacks(mgr, opts); err != nil {
			return nil, err
		}
	}
	clusters := remote.NewCache(mgr.GetClient(), cfg, reg.Scheme())
	clusters.AllowKubeconfigExec = opts.AllowKubeconfigExec
	targets := &kubernetes.Targets{Local: mgr.GetClient(), Cache: clusters}
	remoteOpts := kubernetes.Options{UserErrorRetry: opts.UserErrorRetry, UnreachableRetry: opts.UserErrorRetry,
		MaxConcurrentReconciles: opts.MaxConcurrentReconciles}
	if err := kubernetes.Setup(mgr, targets, remoteOpts); err != nil {
		return nil, fmt.Errorf("set up kubernetes controllers: %w", err)
	}
	if err := workload.Setup(mgr, targets, remoteOpts); err != nil {
		return nil, fmt.Errorf("set up workload controllers: %w", err)
	}
	if err := scheduler.Setup(mgr, scheduler.Options{Retry: opts.UserErrorRetry}); err != nil {
		return nil, fmt.Errorf("set up scheduler: %w", err)
	}
	if err := addProbes(mgr, eng); err != nil {
		return nil, err
	}
	return mgr, nil
}

// withDefaults fills in the options left zero: 10 reconciles per kind, metrics and
// probes off, the cap on terraform processes from the container's limits (read only
// when it is needed), and leader election whenever the resources are sharded.
func withDefaults(opts Options, limits func() Limits) Options {
	if opts.MaxConcurrentReconciles <= 0 {
		opts.MaxConcurrentReconciles = 10
	}
	if opts.MetricsAddr == "" {
		opts.MetricsAddr = "0"
	}
	if opts.HealthAddr == "" {
		opts.HealthAddr = "0"
	}
	defaultConcurrency(&opts, limits)
	if opts.Shards > 0 {
		opts.LeaderElection = true
	}
	return opts
}

// restConfig is a copy of cfg whose rate limits, when left to client-go's default (5
// QPS, or 20 in controller-runtime), do not make the API client, rather than
// terraform, the bottleneck when many claims arrive at once.
func restConfig(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 200, 400
	}
	return cfg
}

// managerOptions are the controller-runtime manager's options for opts.
func managerOptions(opts Options, scheme *runtime.Scheme) ctrl.Options {
	return ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsOptions(opts.MetricsAddr, opts.MetricsSecure),
		HealthProbeBindAddress:  opts.HealthAddr,
		PprofBindAddress:        opts.PprofAddr,
		LeaderElection:          opts.LeaderElection,
		LeaderElectionID:        leaderElectionID(opts),
		LeaderElectionNamespace: opts.LeaderElectionNamespace,
		// The manager gives leadership up once its reconcilers, and so their terraform
		// runs, have stopped: the next leader takes over at once, not after the Lease
		// expires, and never while a run of this one is in flight.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cacheOptions(opts.SecretNamespaces),
		Client:                        client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}}}},
		// Tests run several managers in one process; names stay unique within each.
		// The priority queue lets user changes overtake queued drift checks (low priority).
		// In-flight terraform gets SIGINT and engine.DefaultGracePeriod to write its
		// state; the manager waits longer than that before it gives up on its runnables.
		GracefulShutdownTimeout: ptr.To(engine.DefaultGracePeriod + 15*time.Second),
		Controller:              config.Controller{SkipNameValidation: ptr.To(true), UsePriorityQueue: ptr.To(true)},
		WebhookServer:           webhookServer(opts),
	}
}

// shards sets up this replica's share of the managed resources; nil when not sharded.
func shards(mgr ctrl.Manager, cfg *rest.Config, opts Options) (*shard.Set, error) {
	if opts.Shards <= 0 {
		return nil, nil
	}
	// Leases are read and written straight through the API server: a cached copy
	// would only make conflicts.
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return nil, fmt.Errorf("shard lease client: %w", err)
	}
	set, err := shard.New(c, shard.Options{Shards: opts.Shards, Identity: opts.ShardIdentity, Namespace: opts.LeaderElectionNamespace,
		LeaseDuration: opts.ShardLeaseDuration})
	if err != nil {
		return nil, err
	}
	return set, mgr.Add(set)
}

// cacheOptions keep the cache small and free of secret values. Secrets and ConfigMaps are
// read through the API server (managerOptions' DisableFor) and watched for their metadata
// only; whatever still reaches the cache of either kind is stripped of its data. Terraform
// state Secrets and saved plans (labelled) are not watched at all: that spares the API
// server a watch event per state write. Secrets are watched only in namespaces, when
// given: the controller holds no Secret rights elsewhere.
func cacheOptions(namespaces []string) cache.Options {
	secrets := cache.ByObject{Label: cachedSecrets, Transform: withoutData}
	if len(namespaces) > 0 {
		secrets.Namespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			secrets.Namespaces[ns] = cache.Config{}
		}
	}
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}:    secrets,
			&corev1.ConfigMap{}: {Transform: withoutData},
		},
	}
}

// withoutData strips a Secret's or ConfigMap's data, and every object's managed fields,
// before it enters the cache.
func withoutData(in any) (any, error) {
	switch o := in.(type) {
	case *corev1.Secret:
		o.Data, o.StringData = nil, nil
	case *corev1.ConfigMap:
		o.Data, o.BinaryData = nil, nil
	}
	return cache.TransformStripManagedFields()(in)
}
