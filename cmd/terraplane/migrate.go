package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/kref"
	"terraplane.io/terraplane/internal/migrate"
	"terraplane.io/terraplane/internal/modsource"
)

// toolsFlags are what migrate and export need to reach the cluster and run terraform.
type toolsFlags struct {
	kube            kubeFlags
	stateKubeconfig string
	pluginMirror    string
	terraform       string
}

func (f *toolsFlags) bind(cmd *cobra.Command) {
	f.kube.bind(cmd.Flags())
	cmd.Flags().StringVar(&f.stateKubeconfig, "state-kubeconfig", "", "kubeconfig of the cluster that holds Terraform state (default: the cluster --kubeconfig and --context name)")
	cmd.Flags().StringVar(&f.pluginMirror, "plugin-mirror", engine.DefaultPluginMirror(), "filesystem mirror of Terraform providers")
	cmd.Flags().StringVar(&f.terraform, "terraform", "", "terraform or OpenTofu binary, a path or a name on PATH such as tofu (default: terraform)")
}

// tools connects to the cluster and prepares a private work directory, which cleanup removes.
func (f *toolsFlags) tools(ctx context.Context, progress migrate.Progress) (migrate.Tools, func(), error) {
	cfg, err := f.kube.restConfig()
	if err != nil {
		return migrate.Tools{}, nil, err
	}
	work, err := os.MkdirTemp("", "terraplane-tools-")
	if err != nil {
		return migrate.Tools{}, nil, err
	}
	cleanup := func() { _ = os.RemoveAll(work) }
	fail := func(err error) (migrate.Tools, func(), error) {
		cleanup()
		return migrate.Tools{}, nil, err
	}
	reg := kinds.NewRegistry(&modsource.Loader{CacheDir: filepath.Join(work, ".modules")})
	c, err := client.New(cfg, client.Options{Scheme: reg.Scheme()})
	if err != nil {
		return fail(err)
	}
	eng, err := engine.New(ctx, engine.Options{WorkDir: work, PluginMirror: f.pluginMirror, TerraformPath: f.terraform})
	if err != nil {
		return fail(err)
	}
	state, stateContext, err := f.kube.stateBackend(f.stateKubeconfig)
	if err != nil {
		return fail(err)
	}
	return migrate.Tools{Client: c, Registry: reg, Engine: eng, StateKubeconfig: state, StateContext: stateContext, Progress: progress}, cleanup, nil
}

// run wraps a command body with the tools it needs, progress lines on stderr, and cleanup.
func (f *toolsFlags) run(body func(ctx context.Context, cmd *cobra.Command, t migrate.Tools, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		ctx := ctrl.SetupSignalHandler()
		t, cleanup, err := f.tools(ctx, progressTo(cmd.ErrOrStderr()))
		if err != nil {
			return err
		}
		defer cleanup()
		return body(ctx, cmd, t, args)
	}
}

// progressTo prints one line per step, so a long command shows where it is.
func progressTo(w io.Writer) migrate.Progress {
	return func(format string, args ...any) {
		fmt.Fprintf(w, "==> "+format+"\n", args...)
	}
}

func migrateCommand() *cobra.Command {
	var f toolsFlags
	var o migrate.Options
	var ns nsFlags
	cmd := &cobra.Command{
		Use:   "migrate DIR",
		Short: "Take a Terraform working directory into Terraplane's custody as a Module",
		Long: `Take a Terraform working directory into Terraplane's custody as a Module, without
recreating anything.

The state is read from whatever backend DIR uses (terraform state pull, after terraform
init if DIR is not initialised), with your environment and CLI configuration. Local
module calls inside DIR (./modules/...) travel with the module. Variable values from
terraform.tfvars and *.auto.tfvars become the Module's inputs. The Module starts with
reclaimPolicy Retain, and its first reconcile applies nothing unless the plan is empty.
It is made in the admin namespace (terraplane-system, or --admin-namespace) unless -n
names another. -o json or -o yaml prints the Module made.`,
		Example: `  # a directory with local state or any backend, into the admin namespace
  terraplane migrate ./infra/db --name orders-db --provider-config aws

  # and a claim bound to it, in the team's namespace
  terraplane migrate ./infra/db --name orders-db --claim PostgreSQLInstance/orders/db`,
		Args: cobra.ExactArgs(1),
		// a missing directory is a failure (exit 1), not a usage error, found before
		// anything reaches the cluster
		PreRunE: func(_ *cobra.Command, args []string) error {
			if st, err := os.Stat(args[0]); err != nil || !st.IsDir() {
				return fmt.Errorf("%s is not a directory", args[0])
			}
			return nil
		},
	}
	out := bindOutput(cmd, "", "json", "yaml")
	cmd.RunE = f.run(func(ctx context.Context, cmd *cobra.Command, t migrate.Tools, args []string) error {
		o.Dir = args[0]
		if o.Name == "" {
			abs, _ := filepath.Abs(o.Dir)
			o.Name = filepath.Base(abs)
		}
		o.Namespace = kref.Namespaces{Explicit: ns.namespace, Admin: ns.admin}.For(true)
		mod, err := migrate.Migrate(ctx, t, o)
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		if out.data() {
			mod.SetGroupVersionKind(kinds.ModuleGVK)
			return out.print(w, mod)
		}
		fmt.Fprintf(w, "Module %s/%s now holds the state (reclaimPolicy Retain). Its first reconcile applies nothing unless the plan is empty:\n", mod.Namespace, mod.Name)
		fmt.Fprintf(w, "    kubectl get module -n %s %s\n", mod.Namespace, mod.Name)
		return nil
	})
	f.bind(cmd)
	ns.bind(cmd.Flags())
	cmd.Flags().StringVar(&o.Name, "name", "", "name of the Module and of its ConfigMap <name>-module (default: the directory's name)")
	cmd.Flags().StringSliceVar(&o.ProviderConfigs, "provider-config", nil, "ProviderConfigs (providerconfigs.terraform.terraplane.io) the module's providers use")
	cmd.Flags().StringVar(&o.Claim, "claim", "", "also create a claim bound to the Module, as Kind/namespace/name")
	return cmd
}

// exported is what export -o json prints.
type exported struct {
	// Directory holds the module, its variables and its state.
	Directory string `json:"directory"`
	// Environment names the credentials terraform needs there (values not written).
	Environment []string `json:"environment,omitempty"`
}

func exportCommand() *cobra.Command {
	var f toolsFlags
	var ns nsFlags
	var dir string
	cmd := &cobra.Command{
		Use:   "export KIND/NAME",
		Short: "Hand a retained managed resource back to plain terraform: module, variables and state in a directory",
		Long: `Hand a managed resource with reclaimPolicy Retain back to plain terraform: its module,
variables and state are written to a directory (--out) where terraform init && terraform
plan shows no changes. Credentials are not written; the command names the environment
variables terraform needs.

The resource is named KIND/NAME (or KIND NAME) and looked for in the admin namespace
(terraplane-system, or --admin-namespace) unless -n names another. The directory was -o
before; -o is now the output format: -o json or -o yaml prints the directory and the
environment variables as data.`,
		Example: `  terraplane export module/orders-db --out ./orders-db
  terraplane export S3Bucket photos --out ./photos --context prod -o json`,
		Args: refArgs,
	}
	out := bindOutput(cmd, "--out", "json", "yaml")
	cmd.RunE = f.run(func(ctx context.Context, cmd *cobra.Command, t migrate.Tools, args []string) error {
		s, err := f.kube.connect(&ns, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		target, err := s.resolve(args)
		if err != nil {
			return err
		}
		env, err := migrate.Export(ctx, t, target.gvk.GroupKind().String(), target.namespace, target.name, dir)
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		if out.data() {
			return out.print(w, exported{Directory: dir, Environment: env})
		}
		fmt.Fprintf(w, "Exported to %s; `terraform init && terraform plan` there shows no changes.\n", dir)
		if len(env) > 0 {
			fmt.Fprintf(w, "Set these credentials in the environment first (values not written): %v\n", env)
		}
		fmt.Fprintln(w, "Then delete the managed resource; its reclaimPolicy Retain keeps the infrastructure.")
		return nil
	})
	f.bind(cmd)
	ns.bind(cmd.Flags())
	cmd.Flags().StringVar(&dir, "out", "exported", "directory to write (was -o)")
	return cmd
}
