package main

import (
	"flag"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"terraplane.io/terraplane/controllers/stack"
	"terraplane.io/terraplane/controllers/terraform"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/engineflags"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/runner"
	"terraplane.io/terraplane/internal/shard"
)

// addManagerFlags binds the flags every command that runs controllers shares.
func addManagerFlags(fs *pflag.FlagSet, o *app.Options) {
	engineflags.Bind(fs, &o.Engine)
	fs.StringVar(&o.WorkDir, "workdir", filepath.Join(os.TempDir(), "terraplane-workspaces"), "directory for Terraform workspaces (disposable: state lives in the cluster)")
	fs.IntVar(&o.Engine.MaxConcurrentPerGroup, "max-concurrent-terraform-per-provider", 0, "cap on terraform processes per Provider (default: none beyond the global cap)")
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 10, "workers per kind")
	fs.IntVar(&o.MaxCreatingPerNamespace, "max-creating-per-namespace", 0, "cap on the new resources of one namespace's claims waiting for their first apply at once; the claims beyond wait their turn, the oldest first (default: twice the terraform processes of all replicas; -1: no cap)")
	fs.StringVar(&o.Runner, "runner", app.RunnerInProcess, "where terraform runs: in-process (the controller's own process and identity, for single-user installs), process (a runner process per pool, with the pool's ServiceAccount and a uid of its own: needs root, or --runner-insecure-shared-uid) or deployment (a runner Deployment per pool in the pool's namespace, with the pool's ServiceAccount)")
	fs.StringVar(&o.RunnerMetricsTargets, "runner-metrics-targets", "", "file to keep listing the runner processes' metrics endpoints (--runner process; each serves on a free port of 127.0.0.1), in Prometheus' file-based service discovery format (file_sd_configs)")
	fs.BoolVar(&o.RunnerInsecureSharedUID, "runner-insecure-shared-uid", false, "with --runner process and a controller that is not root, run every pool's runner as the controller's uid, which does not keep pools apart (a module of one pool can read another pool's token and files); refused without it")
	fs.IntVar(&o.RunnerMaxPoolsPerNamespace, "runner-max-pools-per-namespace", runner.DefaultMaxPoolsPerNamespace, "most runners one namespace runs at once (--runner process, or deployment: Deployments scaled up); a resource whose pool would be one more is Synced=False, reason RunnerPoolLimit, until one stops (-1: no cap)")
	fs.StringVar(&o.RunnerImage, "runner-image", "", "the terraplane image runner Deployments run (--runner deployment; the controller's own)")
	fs.StringVar(&o.RunnerCPU, "runner-cpu", "1", "CPU limit of each runner Deployment's pod, which requests at most 100m (--runner deployment)")
	fs.StringVar(&o.RunnerMemory, "runner-memory", "2Gi", "memory limit of each runner Deployment's pod, which requests at most 256Mi; its warm providers count in it, and are capped at half of it unless --provider-memory-budget says otherwise (--runner deployment)")
	fs.StringVar(&o.RunnerPod, "runner-pod", "", `pod settings of runner Deployments, as JSON: {"imagePullSecrets", "imagePullPolicy", "env", "volumes", "volumeMounts", "nodeSelector", "tolerations", "affinity", "priorityClassName", "resources"} as in a pod spec (--runner deployment; the Helm chart passes the controller's own)`)
	fs.DurationVar(&o.RunnerIdleTTL, "runner-idle-ttl", 15*time.Minute, "how long a runner goes without a run before it stops (--runner process) or is scaled to zero (--runner deployment); its pool's next run starts it again and waits for it (0: never)")
	fs.DurationVar(&o.DriftInterval, "drift-interval", terraform.DefaultDriftInterval, "how often an unchanged resource is planned to detect drift (a resource's or class's spec.driftInterval overrides it)")
	fs.StringSliceVar(&o.ModuleSourceAllow, "module-source-allow", nil, "git URLs (https://host/org, git@host:org) and OCI repositories (oci://registry/org) module sources may use, each with what lies below it: same scheme, host and port, the path on / boundaries (default: any)")
	fs.BoolVar(&o.AllowInsecureModuleSources, "allow-insecure-module-sources", false, "let git module sources use http:// and file:// (refused by default)")
	o.ModuleSourceMaxFetch = modsource.DefaultMaxFetchBytes
	fs.Var(engineflags.Bytes(&o.ModuleSourceMaxFetch), "module-source-max-fetch", "cap on what one git fetch of a module source may bring, e.g. 100Mi")
	fs.StringVar(&o.BundledModulesDir, "bundled-modules-dir", "", "render the bundled kinds from the modules in this directory, laid out as the built-in ones (postgresql/database, aws/s3bucket, ...), instead of those built in: a patched module without a new release; a changed module makes a new class revision, rolled out as class revisions are")
	fs.DurationVar(&o.ModuleSourceRefresh, "module-source-refresh", modsource.DefaultRefreshInterval, "how often a module source that names a git branch or tag, or an OCI tag, is looked up again")
	fs.DurationVar(&o.StackTagRefresh, "stack-tag-refresh", stack.DefaultTagRefresh, "how often a stack install that names a package by tag looks the tag up again (a negative value: never)")
	fs.DurationVar(&o.UserErrorRetry, "user-error-retry", 30*time.Second, "how soon a resource stopped by bad input is looked at again")
	fs.StringVar(&o.StackRegistry, "stack-registry", "", "OCI registry that stack installs without spec.source use (host[:port])")
	fs.BoolVar(&o.AllowKubeconfigExec, "allow-kubeconfig-exec", false, "let kubeconfigs in Secrets (providerconfigs.kubernetes.terraplane.io, KubernetesCluster connection Secrets) run commands (exec, auth-provider) and read files (tokenFile, certificate paths) inside the controller; whoever can write such a Secret then acts as the controller")
	fs.StringSliceVar(&o.SecretNamespaces, "secret-namespaces", nil, "the namespaces whose Secrets the controller reads, writes and watches, where its Providers, managed resources and claims live (the Helm chart grants it Secrets there only; default: every namespace)")
	fs.BoolVar(&o.DisableStackManager, "disable-stack-manager", false, "do not run the stack manager, which installs stacks' CRDs, RBAC and Deployments (and so needs the ClusterRole terraplane-stacks)")
}

func controllerCommand() *cobra.Command {
	var o app.Options
	var kube kubeFlags
	var webhook webhookFlags
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the Terraplane controllers against a cluster",
		Long: `Run the Terraplane controllers against a cluster: the one --kubeconfig and --context name,
else $KUBECONFIG, else ~/.kube/config, else the pod's in-cluster configuration.

Terraform state is kept in the same cluster (terraform's kubernetes backend) unless
--state-kubeconfig names another.`,
		Example: `  # in a pod: in-cluster configuration, state in the same cluster
  terraplane controller --leader-elect

  # one of three replicas sharing the managed resources (identity from $POD_NAME)
  terraplane controller --shards 12

  # from a workstation, against a context of your kubeconfig
  terraplane controller --kubeconfig ~/.kube/config --context staging --workdir /var/tmp/terraplane`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := kube.restConfig()
			if err != nil {
				return err
			}
			if o.WorkDir, err = filepath.Abs(o.WorkDir); err != nil {
				return err
			}
			if o.StateKubeconfig, o.StateContext, err = kube.stateBackend(o.StateKubeconfig); err != nil {
				return err
			}
			if o.PolicyWebhook, err = webhook.options(); err != nil {
				return err
			}
			ctx := ctrl.SetupSignalHandler()
			mgr, err := app.New(ctx, cfg, o)
			if err != nil {
				return err
			}
			return mgr.Start(ctx)
		},
	}
	addManagerFlags(cmd.Flags(), &o)
	kube.bind(cmd.Flags())
	cmd.Flags().StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", "address of the metrics endpoint (\"0\" disables it)")
	cmd.Flags().BoolVar(&o.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers allowed to get /metrics (false: plain HTTP, no authentication)")
	cmd.Flags().StringVar(&o.HealthAddr, "health-probe-bind-address", ":8081", "address of the health endpoints")
	cmd.Flags().StringVar(&o.PprofAddr, "pprof-bind-address", "", "address that serves Go's CPU and memory profiles at /debug/pprof/, unauthenticated: keep it on loopback (empty: off)")
	cmd.Flags().BoolVar(&debugLogs, "debug", false, "log at debug level: every terraform run, and Terraform's full output of failed runs (secret values removed); same as --zap-log-level=debug")
	cmd.Flags().BoolVar(&o.LeaderElection, "leader-elect", false, "elect one active replica")
	cmd.Flags().StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "terraplane-system", "namespace of the leader election Lease")
	cmd.Flags().IntVar(&o.Shards, "shards", 0, "split the managed resources into this many shards shared out between replicas through Leases (0: no sharding); implies --leader-elect for everything else")
	cmd.Flags().StringVar(&o.ShardIdentity, "shard-identity", os.Getenv("POD_NAME"), "this replica's name among the shard holders (default: $POD_NAME)")
	cmd.Flags().DurationVar(&o.ShardLeaseDuration, "shard-lease-duration", shard.DefaultLeaseDuration, "how long a replica that stopped renewing keeps its shards before others take them")
	cmd.Flags().StringVar(&o.StateKubeconfig, "state-kubeconfig", "", "kubeconfig of the cluster terraform's state backend uses (default: the cluster the controller talks to)")
	cmd.Flags().BoolVar(&o.StateBackendProxy, "state-backend-proxy", true, "have terraform's state backend reach the API server through a loopback proxy of this process, which reads each state by its name instead of having the API server go through every Secret of its namespace, as a runner pool's runner always does (false: terraform talks to the API server itself, with the state kubeconfig)")
	webhook.bind(cmd.Flags())
	zapFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	logOptions.BindFlags(zapFlags) // --zap-log-level, --zap-encoder, ...
	cmd.Flags().AddGoFlagSet(zapFlags)
	return cmd
}
