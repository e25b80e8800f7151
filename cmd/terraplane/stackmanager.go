package main

import (
	"flag"
	"os"
	"path/filepath"
	"terraplane.io/terraplane/internal/engineflags"
	"time"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"terraplane.io/terraplane/controllers/stack"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/modsource"
)

func stackManagerCommand() *cobra.Command {
	var o app.Options
	var kube kubeFlags
	cmd := &cobra.Command{
		Use:   "stack-manager",
		Short: "Run only the stack manager: stack installs, Stacks and the CRDs of ClaimDefinitions",
		Long: `Run only the stack manager against a cluster: StackInstall, ClusterStackInstall and Stack,
and the CustomResourceDefinitions and ClusterRoles of ClaimDefinitions. It is the one part
of Terraplane that creates CRDs, RBAC objects and Deployments, so in a cluster it runs as
a ServiceAccount of its own, and the controller runs with --disable-stack-manager.`,
		Example: `  # in a pod, beside a controller started with --disable-stack-manager
  terraplane stack-manager --leader-elect --stack-registry registry.example.com`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := kube.restConfig()
			if err != nil {
				return err
			}
			if o.WorkDir, err = filepath.Abs(o.WorkDir); err != nil {
				return err
			}
			ctx := ctrl.SetupSignalHandler()
			mgr, err := app.NewStackManager(ctx, cfg, o)
			if err != nil {
				return err
			}
			return mgr.Start(ctx)
		},
	}
	fs := cmd.Flags()
	kube.bind(fs)
	fs.StringVar(&o.WorkDir, "workdir", filepath.Join(os.TempDir(), "terraplane-stack-manager"), "directory for the module sources ClaimDefinitions read (disposable)")
	fs.StringVar(&o.StackRegistry, "stack-registry", "", "OCI registry that stack installs without spec.source use (host[:port])")
	fs.DurationVar(&o.StackTagRefresh, "stack-tag-refresh", stack.DefaultTagRefresh, "how often a stack install that names a package by tag looks the tag up again (a negative value: never)")
	fs.DurationVar(&o.UserErrorRetry, "user-error-retry", 30*time.Second, "how soon an install or definition stopped by bad input is looked at again")
	fs.StringSliceVar(&o.ModuleSourceAllow, "module-source-allow", nil, "git URLs and OCI repositories the module sources of ClaimDefinitions may use (default: any)")
	fs.BoolVar(&o.AllowInsecureModuleSources, "allow-insecure-module-sources", false, "let git module sources use http:// and file:// (refused by default)")
	o.ModuleSourceMaxFetch = modsource.DefaultMaxFetchBytes
	fs.Var(engineflags.Bytes(&o.ModuleSourceMaxFetch), "module-source-max-fetch", "cap on what one git fetch of a module source may bring, e.g. 100Mi")
	fs.BoolVar(&o.LeaderElection, "leader-elect", false, "elect one active replica")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "terraplane-system", "namespace of the leader election Lease")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", "0", "address of the metrics endpoint (\"0\" disables it)")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers allowed to get /metrics")
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", ":8081", "address of the health endpoints")
	zapFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	logOptions.BindFlags(zapFlags)
	fs.AddGoFlagSet(zapFlags)
	return cmd
}
