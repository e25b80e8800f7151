package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/plugins"
	"terraplane.io/terraplane/internal/runner"
	"terraplane.io/terraplane/internal/statelock"
)

// runnerOptions are a runner's flags.
type runnerOptions struct {
	pool, socket, kubeconfig string
	engine                   engine.Options
}

func runnerCommand() *cobra.Command {
	var o runnerOptions
	cmd := &cobra.Command{
		Use:   "runner",
		Short: "Run terraform for one runner pool (started by the controller)",
		Long: `Run terraform for one runner pool: serve the controller's runs of the workspaces of the
pool's namespace on a unix socket, with the pool's own Kubernetes identity (--kubeconfig)
for their state and locks, and keep the pool's provider processes warm.

The controller starts one runner per pool (--runner process) and gives it, on standard
input, the token each request must carry. It is not meant to be started by hand.`,
		Example: `  # what the controller runs for the default pool of namespace team-a
  echo "$TOKEN" | terraplane runner --pool team-a/default --socket /run/pool/runner.sock \
    --workdir /run/pool/work --kubeconfig /run/pool/kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRunner(ctrl.SetupSignalHandler(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.pool, "pool", "", "the pool this runner serves, namespace/name")
	f.StringVar(&o.socket, "socket", "", "unix socket to serve the controller's runs on")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "the pool's kubeconfig: its identity for the state and state locks")
	f.StringVar(&o.engine.WorkDir, "workdir", "", "directory for the pool's workspaces")
	f.StringVar(&o.engine.PluginMirror, "plugin-mirror", devenv.PluginMirror(), "filesystem mirror of Terraform providers")
	f.StringVar(&o.engine.TerraformPath, "terraform", "", "terraform or OpenTofu binary (default: terraform on PATH)")
	f.StringVar(&o.engine.NetworkMirror, "provider-mirror-url", "", "Terraform provider network mirror (static-file protocol)")
	f.BoolVar(&o.engine.AllowDirect, "provider-download", false, "let terraform download providers from their registries")
	f.StringVar(&o.engine.ModuleRegistryURL, "module-registry-url", "", "module registry serving the modules addressed to the public registry (default: the public registry)")
	f.DurationVar(&o.engine.Timeout, "terraform-timeout", engine.DefaultTimeout, "deadline of each terraform command of a workspace that sets none of its own")
	f.IntVar(&o.engine.MaxConcurrent, "max-concurrent-terraform", 0, "cap on terraform processes running at once (default: 2 per CPU)")
	f.BoolVar(&o.engine.ProviderReuse, "provider-reuse", true, "keep the pool's provider processes warm between runs")
	f.DurationVar(&o.engine.ProviderTTL, "provider-ttl", plugins.DefaultTTL, "how long a reused provider process lives")
	f.IntVar(&o.engine.ProviderRunsPerProcess, "provider-runs-per-process", plugins.DefaultRunsPerProcess, "runs one provider process serves at once")
	f.Var(byteSize{&o.engine.ProviderMemoryBudget}, "provider-memory-budget", "cap on the resident memory of the pool's warm provider processes, e.g. 2Gi; idle ones are stopped past it, the least recently used first (default: none)")
	for _, name := range []string{"pool", "socket", "kubeconfig", "workdir"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

// runRunner serves the pool's runs until ctx ends, then lets the runs in flight write
// their state.
func runRunner(ctx context.Context, o runnerOptions) error {
	token, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if token = strings.TrimSpace(token); token == "" {
		return fmt.Errorf("no token on standard input: %v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return fmt.Errorf("pool kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("pool client: %w", err)
	}
	hold, grace := o.engine.Timeout, engine.DefaultGracePeriod+time.Minute
	if hold <= 0 {
		hold = engine.DefaultTimeout
	}
	locker := statelock.NewLocker(c, c, hold+grace, grace)
	srv := &runner.Server{Token: token}
	o.engine.Locker, o.engine.OnRun, o.engine.Log = locker, srv.OnRun, ctrl.Log.WithName("providers")
	eng, err := engine.New(ctx, o.engine)
	if err != nil {
		return err
	}
	defer eng.Stop()
	srv.Runs = &runner.Local{Engine: eng, Locker: locker}
	_ = os.Remove(o.socket)
	lis, err := net.Listen("unix", o.socket)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if err := os.Chmod(o.socket, 0o600); err != nil {
		return err
	}
	// a run's context ends with the runner's: on SIGTERM terraform is interrupted and
	// gets its grace period to write its state, and the reply still reaches the controller
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		<-ctx.Done()
		stop, cancel := context.WithTimeout(context.Background(), engine.DefaultGracePeriod+5*time.Second)
		defer cancel()
		_ = hs.Shutdown(stop)
	}()
	fmt.Fprintf(os.Stderr, "runner of pool %s serving on %s\n", o.pool, o.socket)
	if err := hs.Serve(lis); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}
