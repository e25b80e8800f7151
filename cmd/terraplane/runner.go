package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/backendproxy"
	"terraplane.io/terraplane/internal/collectors"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/engineflags"
	"terraplane.io/terraplane/internal/planpolicy"
	"terraplane.io/terraplane/internal/runner"
	"terraplane.io/terraplane/internal/statelock"
)

// runnerOptions are a runner's flags.
type runnerOptions struct {
	pool, socket, kubeconfig string
	// listen, with TLS from the cert and key files and the token from tokenFile, is how a
	// runner in a pod serves (--runner deployment)
	listen, certFile, keyFile, tokenFile string
	// metrics is where the runner serves its metrics (plain HTTP); "0" serves none
	metrics string
	engine  engine.Options
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
input, the token each request must carry. With --runner deployment, a runner is a pod in
its pool's namespace: it serves over TLS on --listen, with the token in --token-file, and
its identity is the pod's ServiceAccount. --metrics-bind-address serves Prometheus
metrics of the pool's terraform processes and warm providers, labelled with the pool.
It is not meant to be started by hand.`,
		Example: `  # what the controller runs for the default pool of namespace team-a
  echo "$TOKEN" | terraplane runner --pool team-a/default --socket /run/pool/runner.sock \
    --workdir /run/pool/work --kubeconfig /run/pool/kubeconfig

  # what a runner Deployment's pod runs
  terraplane runner --pool team-a/default --listen :8443 --tls-cert-file /etc/terraplane-runner/tls.crt \
    --tls-key-file /etc/terraplane-runner/tls.key --token-file /etc/terraplane-runner/token --workdir /var/lib/terraplane/runner/work \
    --metrics-bind-address :8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runRunner(ctrl.SetupSignalHandler(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.pool, "pool", "", "the pool this runner serves, namespace/name")
	f.StringVar(&o.socket, "socket", "", "unix socket to serve the controller's runs on")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "the pool's kubeconfig: its identity for the state and state locks (default: the pod's ServiceAccount)")
	f.StringVar(&o.listen, "listen", "", "address to serve the controller's runs on over TLS (instead of --socket)")
	f.StringVar(&o.certFile, "tls-cert-file", "", "the runner's certificate, with --listen")
	f.StringVar(&o.keyFile, "tls-key-file", "", "the runner's private key, with --listen")
	f.StringVar(&o.tokenFile, "token-file", "", "the token each request must carry (default: read from standard input)")
	f.StringVar(&o.metrics, "metrics-bind-address", "0", "address to serve Prometheus metrics on over plain HTTP (GET /metrics): the pool's terraform processes and warm providers; port 0 picks a free one; \"0\" serves none")
	f.StringVar(&o.engine.WorkDir, "workdir", "", "directory for the pool's workspaces")
	engineflags.Bind(f, &o.engine)
	for _, name := range []string{"pool", "workdir"} {
		_ = cmd.MarkFlagRequired(name)
	}
	cmd.MarkFlagsOneRequired("socket", "listen")
	cmd.MarkFlagsMutuallyExclusive("socket", "listen")
	cmd.MarkFlagsRequiredTogether("listen", "tls-cert-file", "tls-key-file", "token-file")
	return cmd
}

// runnerToken is the token each request must carry: --token-file's, else the first line
// of standard input.
func runnerToken(o runnerOptions) (string, error) {
	var token string
	var err error
	if o.tokenFile != "" {
		b, rerr := os.ReadFile(o.tokenFile)
		token, err = string(b), rerr
	} else {
		token, err = bufio.NewReader(os.Stdin).ReadString('\n')
	}
	if token = strings.TrimSpace(token); token == "" {
		return "", fmt.Errorf("no token (--token-file or standard input): %v", err)
	}
	return token, nil
}

// runnerConfig is the runner's identity: --kubeconfig, else the pod's ServiceAccount.
func runnerConfig(o runnerOptions) (*rest.Config, error) {
	if o.kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig and not in a pod: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("pool kubeconfig: %w", err)
	}
	return cfg, nil
}

// runnerListener is where the runner serves: its unix socket (only its uid may open
// it), or a TCP address with TLS.
func runnerListener(o runnerOptions) (net.Listener, error) {
	if o.listen == "" {
		_ = os.Remove(o.socket)
		lis, err := net.Listen("unix", o.socket)
		if err != nil {
			return nil, fmt.Errorf("listen: %w", err)
		}
		return lis, os.Chmod(o.socket, 0o600)
	}
	cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
	if err != nil {
		return nil, fmt.Errorf("runner certificate: %w", err)
	}
	lis, err := tls.Listen("tcp", o.listen, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return lis, nil
}

// runRunner serves the pool's runs until ctx ends, then lets the runs in flight write
// their state.
func runRunner(ctx context.Context, o runnerOptions) error {
	token, err := runnerToken(o)
	if err != nil {
		return err
	}
	cfg, err := runnerConfig(o)
	if err != nil {
		return err
	}
	c, err := client.New(app.RunnerRestConfig(cfg), client.Options{})
	if err != nil {
		return fmt.Errorf("pool client: %w", err)
	}
	locker := statelock.ForEngine(c, c, o.engine.Timeout)
	srv := &runner.Server{Token: token}
	o.engine.Locker, o.engine.OnRun, o.engine.Log = locker, srv.OnRun, ctrl.Log.WithName("providers")
	o.engine.CheckCreate, o.engine.CPU = (&planpolicy.Cache{}).CheckCreate, app.ContainerCPUMeter()
	// terraform's state backend reaches the cluster with the pool's identity, through a
	// proxy that reads a state by its name
	if o.engine.StateBackend, err = backendproxy.Start(cfg, o.engine.WorkDir); err != nil {
		return err
	}
	eng, err := engine.New(ctx, o.engine)
	if err != nil {
		_ = o.engine.StateBackend.Close()
		return err
	}
	defer eng.Stop()
	srv.Runs = &runner.Local{Engine: eng, Locker: locker}
	if srv.Info.MetricsAddress, err = serveRunnerMetrics(ctx, o, eng); err != nil {
		return err
	}
	lis, err := runnerListener(o)
	if err != nil {
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
	fmt.Fprintf(os.Stderr, "runner of pool %s serving on %s; metrics on %q\n", o.pool, lis.Addr(), srv.Info.MetricsAddress)
	if err := hs.Serve(lis); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

// serveRunnerMetrics serves the runner's metrics on --metrics-bind-address until ctx
// ends, and returns the address it listens on ("" when it serves none).
func serveRunnerMetrics(ctx context.Context, o runnerOptions, eng *engine.Engine) (string, error) {
	if o.metrics == "" || o.metrics == "0" {
		return "", nil
	}
	lis, err := net.Listen("tcp", o.metrics)
	if err != nil {
		return "", fmt.Errorf("metrics listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", collectors.RunnerMetrics(eng, o.pool))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(lis) }()
	go func() { <-ctx.Done(); _ = hs.Close() }()
	return lis.Addr().String(), nil
}
