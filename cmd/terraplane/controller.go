package main

import (
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
)

// addManagerFlags binds the flags every command that runs controllers shares.
func addManagerFlags(fs *pflag.FlagSet, o *app.Options) {
	fs.StringVar(&o.WorkDir, "workdir", filepath.Join(os.TempDir(), "terraplane-workspaces"), "directory for Terraform workspaces (disposable: state lives in the cluster)")
	fs.StringVar(&o.PluginMirror, "plugin-mirror", devenv.PluginMirror(), "filesystem mirror of Terraform providers")
	fs.StringVar(&o.TerraformPath, "terraform", "", "terraform or OpenTofu binary, a path or a name on PATH such as tofu (default: terraform)")
	fs.StringVar(&o.ProviderMirrorURL, "provider-mirror-url", "", "Terraform provider network mirror (static-file protocol), e.g. https://mirror.example.internal/providers/")
	fs.BoolVar(&o.ProviderDownload, "provider-download", false, "let terraform download providers from their registries")
	fs.StringVar(&o.PluginCacheDir, "plugin-cache-dir", "", "cache shared by all workspaces for providers from a network mirror or registry (default <workdir>/.plugin-cache)")
	fs.IntVar(&o.MaxConcurrentTerraform, "max-concurrent-terraform", 0, "cap on terraform processes running at once (default: from the container's CPU quota and memory limit)")
	fs.IntVar(&o.MaxConcurrentTerraformPerProvider, "max-concurrent-terraform-per-provider", 0, "cap on terraform processes per Provider (default: none beyond the global cap)")
	fs.IntVar(&o.MaxConcurrentReconciles, "max-concurrent-reconciles", 10, "workers per kind")
	fs.DurationVar(&o.DriftInterval, "drift-interval", 10*time.Minute, "how often an unchanged resource is planned to detect drift")
	fs.StringSliceVar(&o.ModuleSourceAllow, "module-source-allow", nil, "URL prefixes git module sources may use (default: any)")
	fs.DurationVar(&o.UserErrorRetry, "user-error-retry", 30*time.Second, "how soon a resource stopped by bad input is looked at again")
	fs.StringVar(&o.StackRegistry, "stack-registry", "", "OCI registry that stack installs without spec.source use (host[:port])")
}

func controllerCommand() *cobra.Command {
	var o app.Options
	var debug bool
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the Terraplane controllers against a cluster (--kubeconfig or in-cluster)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if debug {
				ctrl.SetLogger(zap.New(zap.Level(zapcore.DebugLevel)))
			}
			cfg, err := config.GetConfig()
			if err != nil {
				return err
			}
			if o.StateKubeconfig == "" {
				o.StateKubeconfig = os.Getenv("KUBECONFIG")
			}
			ctx := ctrl.SetupSignalHandler()
			mgr, _, err := app.New(ctx, cfg, o)
			if err != nil {
				return err
			}
			return mgr.Start(ctx)
		},
	}
	addManagerFlags(cmd.Flags(), &o)
	cmd.Flags().StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", "address of the metrics endpoint (\"0\" disables it)")
	cmd.Flags().BoolVar(&o.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS to callers allowed to get /metrics (false: plain HTTP, no authentication)")
	cmd.Flags().StringVar(&o.HealthAddr, "health-probe-bind-address", ":8081", "address of the health endpoints")
	cmd.Flags().BoolVar(&debug, "debug", false, "log Terraform's full output of failed runs (secret values removed)")
	cmd.Flags().BoolVar(&o.LeaderElection, "leader-elect", false, "elect one active replica")
	cmd.Flags().StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "terraplane-system", "namespace of the leader election Lease")
	cmd.Flags().StringVar(&o.StateKubeconfig, "state-kubeconfig", "", "kubeconfig terraform's state backend uses (default: $KUBECONFIG, else in-cluster)")
	// --kubeconfig is registered by controller-runtime's config package on the Go flag set.
	cmd.Flags().AddGoFlagSet(goFlags())
	return cmd
}
