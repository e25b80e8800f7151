package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
)

// devOptions configure `terraplane dev`.
type devOptions struct {
	app.Options
	kubeconfigOut string
	quickstart    string
	s3Port        int
	stateDir      string
	ephemeral     bool
	startTimeout  time.Duration
	// workdirSet is true when --workdir was given; else workspaces go under the state
	// directory.
	workdirSet bool
}

func devCommand() *cobra.Command { return newDevCommand(&devOptions{}) }

// newDevCommand is `terraplane dev` with its flags bound to o.
func newDevCommand(o *devOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Start a local control plane with the controllers in-process (and optionally the quickstart)",
		Long: `Start etcd and a kube-apiserver on loopback, install the CRDs, and run every controller
in-process. It prints its progress and, as they happen, the events the controllers send
(one line each; "!" marks a warning); --log-format=json prints the controllers' log lines
instead. Its data is kept under --state-dir, so stopping and starting again resumes.

Run as root, terraform runs in a runner process per pool (--runner process), each under
a uid of its own with its pool's ServiceAccount, so that one namespace's modules reach
nothing of another's. Run as another user, it runs in this process (--runner in-process),
with the controllers' identity: fine for one person's modules, not for untrusted ones.
--runner process then needs --runner-insecure-shared-uid, which runs every pool under
your uid.`,
		Example: `  # the quickstart: moto_server (the AWS API emulator) as the S3 endpoint and a Bucket claim
  terraplane dev --quickstart examples/quickstart

  # a throwaway plane, logs as JSON
  terraplane dev --ephemeral --log-format=json

  # terraform in the controllers' process even as root
  sudo terraplane dev --runner in-process`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if devLogFormat != "text" && devLogFormat != "json" {
				return fmt.Errorf("--log-format must be text or json, not %q", devLogFormat)
			}
			o.workdirSet = cmd.Flags().Changed("workdir")
			o.Runner = devRunner(o.Runner, cmd.Flags().Changed("runner"), os.Geteuid())
			return runDev(ctrl.SetupSignalHandler(), *o)
		},
	}
	addManagerFlags(cmd.Flags(), &o.Options)
	workdir := cmd.Flags().Lookup("workdir")
	workdir.DefValue = "<state-dir>/workspaces"
	workdir.Usage = "directory for Terraform workspaces (disposable: state lives in the cluster); with --ephemeral, a temporary directory removed on exit"
	cmd.Flags().Lookup("runner").DefValue = "process as root, in-process otherwise"
	cmd.Flags().StringVar(&o.kubeconfigOut, "kubeconfig-out", ".terraplane/kubeconfig", "where to write the control plane's admin kubeconfig")
	cmd.Flags().StringVar(&o.quickstart, "quickstart", "", "directory of manifests to apply after start (starts moto_server, the AWS API emulator, as the S3 endpoint)")
	cmd.Flags().IntVar(&o.s3Port, "s3-port", 9900, "loopback port of the quickstart's S3 endpoint (the quickstart Provider's endpoint follows it)")
	cmd.Flags().IntVar(&o.s3Port, "minio-port", 9900, "")
	_ = cmd.Flags().MarkDeprecated("minio-port", "use --s3-port")
	cmd.Flags().StringVar(&o.stateDir, "state-dir", ".terraplane", "directory for the control plane's data (etcd), the S3 emulator's data and workspaces; starting again on it resumes where the last run stopped")
	cmd.Flags().DurationVar(&o.startTimeout, "start-timeout", devenv.DefaultStartTimeout, "how long each of etcd and kube-apiserver may take to start; raise it on a slow or busy machine")
	cmd.Flags().StringVar(&devLogFormat, "log-format", "text", "text: progress and the controllers' events for a person; json: the controllers' log lines, for machines")
	cmd.Flags().BoolVar(&o.ephemeral, "ephemeral", false, "keep the control plane's data, MinIO's data and the workspaces in a temporary directory removed on exit (every claim, class, Provider and Terraform state is lost)")
	return cmd
}

// devRunner is where dev runs terraform: --runner when given; else in a runner process
// per pool when dev runs as root (euid 0), which gives each pool a uid of its own, and
// in this process otherwise.
func devRunner(flag string, given bool, euid int) string {
	switch {
	case given:
		return flag
	case euid == 0:
		return app.RunnerProcess
	}
	return app.RunnerInProcess
}

// runnerNote says where terraform runs, and what that keeps apart.
func runnerNote(mode string, sharedUID bool, euid int) string {
	switch {
	case mode == app.RunnerProcess && euid == 0:
		return "terraform runs in a runner process per pool, each under a uid of its own (--runner process)"
	case mode == app.RunnerProcess && sharedUID:
		return fmt.Sprintf("WARNING: terraform runs in a runner process per pool, all as uid %d (--runner-insecure-shared-uid): a module of one pool can read another pool's token and files", euid)
	case mode == app.RunnerDeployment:
		return "terraform runs in a runner Deployment per pool (--runner deployment)"
	case mode == app.RunnerProcess:
		return "terraform runs in a runner process per pool (--runner process)"
	}
	return "terraform runs in this process, with the controllers' identity (--runner in-process): run as root for a runner process per pool, each under a uid of its own"
}

// etcdDir is where the control plane keeps its data: under the state directory, or
// nowhere that outlives the run with --ephemeral.
func (o devOptions) etcdDir() string {
	if o.ephemeral {
		return ""
	}
	return filepath.Join(o.stateDir, "etcd")
}

// useDirs decides where the plane keeps its data: under --state-dir, or with --ephemeral
// in a temporary directory that cleanup removes (workspaces and MinIO's data included,
// unless --workdir names a directory of the user's).
func (o *devOptions) useDirs() (cleanup func(), err error) {
	cleanup = func() {}
	if o.ephemeral {
		tmp, err := os.MkdirTemp("", "terraplane-dev-")
		if err != nil {
			return nil, err
		}
		o.stateDir, cleanup = tmp, func() { _ = os.RemoveAll(tmp) }
	}
	if !o.workdirSet {
		o.WorkDir = filepath.Join(o.stateDir, "workspaces")
	}
	return cleanup, nil
}

func runDev(ctx context.Context, o devOptions) error {
	start := time.Now()
	cleanup, err := o.useDirs()
	if err != nil {
		return err
	}
	defer cleanup() // last, once MinIO, the controllers and the control plane have stopped
	say("starting the control plane (etcd + kube-apiserver)")
	cp, err := startControlPlane(o)
	if err != nil {
		return err
	}
	defer cp.Stop()
	say("control plane up in %s; kubeconfig: %s", time.Since(start).Round(100*time.Millisecond), o.kubeconfigOut)
	if dir := o.etcdDir(); dir != "" {
		say("its data is kept in %s: starting again resumes every claim, class, Provider and Terraform state (--ephemeral keeps nothing)", dir)
	} else {
		say("ephemeral: everything is lost when this stops")
	}
	say("%s", runnerNote(o.Runner, o.RunnerInsecureSharedUID, os.Geteuid()))
	o.StateKubeconfig, o.StateBackendProxy = cp.Kubeconfig, true // state read by name, as the controller's default
	if o.WorkDir, err = filepath.Abs(o.WorkDir); err != nil {
		return err
	}
	if o.PolicyWebhook, err = devWebhook(); err != nil {
		return err
	}
	mgr, err := app.New(ctx, cp.Config, o.Options)
	if err != nil {
		return err
	}
	errs := make(chan error, 1)
	go func() { errs <- mgr.Start(ctx) }()
	if devLogFormat == "text" {
		if err := printEvents(ctx, mgr.GetCache(), os.Stdout); err != nil {
			return err
		}
	}
	say("controllers running")
	if o.quickstart != "" {
		s3, err := devenv.StartMoto(ctx, filepath.Join(o.stateDir, "s3"), devenv.MotoOptions{Port: o.s3Port, Persist: true})
		if err != nil {
			return err
		}
		defer s3.Stop()
		say("moto_server (the AWS API emulator: the demo S3 endpoint) on %s", s3.Endpoint)
		// Ctrl-C while the quickstart is still coming up stops the plane like any other time
		if err := runQuickstart(ctx, mgr.GetClient(), o, s3.Endpoint); err != nil && ctx.Err() == nil {
			return err
		}
	}
	printHelp(os.Stdout, o, countFleet(ctx, mgr.GetAPIReader()))
	select {
	case <-ctx.Done():
		say("stopping")
		// The controllers stop first (in-flight terraform gets to write its state), then
		// the S3 emulator and the control plane.
		return <-errs
	case err := <-errs:
		return err
	}
}

// startControlPlane starts dev's control plane; one that did not start in time says
// which flag gives it longer.
func startControlPlane(o devOptions) (*devenv.ControlPlane, error) {
	cp, err := devenv.StartControlPlaneWith(devenv.ControlPlaneOptions{Kubeconfig: o.kubeconfigOut, DataDir: o.etcdDir(), StartTimeout: o.startTimeout})
	if slow := new(devenv.StartError); errors.As(err, &slow) {
		return nil, fmt.Errorf("%w: on a slow or busy machine, give them longer with --start-timeout (it was %s)", err, slow.Timeout)
	}
	return cp, err
}

// runQuickstart applies the quickstart manifests, its Provider pointed at the S3 on
// endpoint, and waits until every claim is Bound and Ready. Applying is create-or-update:
// a restart on the same state finds the claim it made last time, and makes nothing new.
func runQuickstart(ctx context.Context, c client.Client, o devOptions, endpoint string) error {
	say("applying %s", o.quickstart)
	objs, err := devenv.ApplyDirWith(ctx, c, o.quickstart, devenv.PointAtS3(endpoint))
	if err != nil {
		return err
	}
	for _, obj := range objs {
		fmt.Printf("    %s %s/%s\n", obj.GetKind(), obj.GetNamespace(), obj.GetName())
	}
	// Runners may run terraform under uids of their own: the clusters' tools and data
	// live where every uid reaches them.
	stateDir := filepath.Join(os.TempDir(), "terraplane-demo-clusters")
	binDir, err := devenv.ShareClusterTools(stateDir)
	if err != nil {
		return err
	}
	clusters, err := devenv.DemoClusterObjects(devenv.DemoClusterOptions{AdminNamespace: defaultAdminNamespace, AppNamespace: "demo",
		Class: "local", BinDir: binDir, StateDir: stateDir})
	if err != nil {
		return err
	}
	if err := devenv.ApplyObjects(ctx, c, clusters); err != nil {
		return err
	}
	say("KubernetesClusterClass demo/local makes real clusters on this machine: an etcd and a kube-apiserver each (%s)", devenv.DemoClusterModule)
	for _, obj := range objs {
		if obj.GetKind() != "Bucket" {
			continue
		}
		start := time.Now()
		say("waiting for Bucket %s/%s to be Bound and Ready", obj.GetNamespace(), obj.GetName())
		if err := waitBound(ctx, c, obj, 5*time.Minute); err != nil {
			return err
		}
		say("Bucket %s/%s is Bound and Ready after %s", obj.GetNamespace(), obj.GetName(), time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

func waitBound(ctx context.Context, c client.Client, obj *unstructured.Unstructured, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(obj.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur); err == nil {
			phase, _, _ := unstructured.NestedString(cur.Object, "status", "bindingPhase")
			if phase == "Bound" && conditionTrue(cur, "Ready") {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s %s/%s did not become Bound and Ready: %w (see kubectl describe)", obj.GetKind(), obj.GetNamespace(), obj.GetName(), ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}

func say(format string, args ...any) {
	fmt.Printf("==> "+format+"\n", args...)
}

// devWebhook is the plan policies' admission webhook of `terraplane dev`, always on: the
// API server calls it on a free port of 127.0.0.1.
func devWebhook() (*app.WebhookOptions, error) {
	port, err := devenv.FreePort()
	if err != nil {
		return nil, fmt.Errorf("policy webhook port: %w", err)
	}
	return app.LocalWebhook(port, "terraplane-system"), nil
}
