package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/migrate"
	"terraplane.io/terraplane/internal/modsource"
)

// toolsFlags are what migrate and export need to reach the cluster and run terraform.
type toolsFlags struct {
	stateKubeconfig string
	pluginMirror    string
	terraform       string
	kube            *flag.FlagSet
}

func (f *toolsFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.stateKubeconfig, "state-kubeconfig", "", "kubeconfig terraform's state backend uses (default: $KUBECONFIG)")
	cmd.Flags().StringVar(&f.pluginMirror, "plugin-mirror", devenv.PluginMirror(), "filesystem mirror of Terraform providers")
	cmd.Flags().StringVar(&f.terraform, "terraform", "", "terraform or OpenTofu binary, a path or a name on PATH such as tofu (default: terraform)")
	f.kube = goFlags()
	cmd.Flags().AddGoFlagSet(f.kube)
}

func (f *toolsFlags) tools(ctx context.Context) (migrate.Tools, func(), error) {
	cfg, err := config.GetConfig()
	if err != nil {
		return migrate.Tools{}, nil, err
	}
	work, err := os.MkdirTemp("", "terraplane-tools-")
	if err != nil {
		return migrate.Tools{}, nil, err
	}
	cleanup := func() { _ = os.RemoveAll(work) }
	reg := kinds.NewRegistry(&modsource.Loader{CacheDir: filepath.Join(work, ".modules")})
	c, err := client.New(cfg, client.Options{Scheme: reg.Scheme()})
	if err != nil {
		cleanup()
		return migrate.Tools{}, nil, err
	}
	eng, err := engine.New(ctx, engine.Options{WorkDir: work, PluginMirror: f.pluginMirror, TerraformPath: f.terraform})
	if err != nil {
		cleanup()
		return migrate.Tools{}, nil, err
	}
	state := f.stateKubeconfig
	if state == "" {
		state = os.Getenv("KUBECONFIG")
	}
	if state == "" {
		state = f.kube.Lookup("kubeconfig").Value.String()
	}
	if state == "" {
		cleanup()
		return migrate.Tools{}, nil, fmt.Errorf("pass --kubeconfig or --state-kubeconfig: terraform's state backend needs one")
	}
	if state, err = filepath.Abs(state); err != nil {
		cleanup()
		return migrate.Tools{}, nil, err
	}
	return migrate.Tools{Client: c, Registry: reg, Engine: eng, StateKubeconfig: state}, cleanup, nil
}

// run wraps a command body with the tools it needs and their cleanup.
func (f *toolsFlags) run(body func(ctx context.Context, t migrate.Tools, args []string) error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		ctx := ctrl.SetupSignalHandler()
		t, cleanup, err := f.tools(ctx)
		if err != nil {
			return err
		}
		defer cleanup()
		return body(ctx, t, args)
	}
}

func migrateCommand() *cobra.Command {
	var f toolsFlags
	var o migrate.Options
	cmd := &cobra.Command{
		Use:   "migrate DIR",
		Short: "Take a Terraform working directory (module + terraform.tfstate) into Terraplane's custody as a Module",
		Args:  cobra.ExactArgs(1),
		RunE: f.run(func(ctx context.Context, t migrate.Tools, args []string) error {
			o.Dir = args[0]
			if o.Name == "" {
				abs, _ := filepath.Abs(o.Dir)
				o.Name = filepath.Base(abs)
			}
			mod, err := migrate.Migrate(ctx, t, o)
			if err != nil {
				return err
			}
			fmt.Printf("Module %s/%s now holds the state (reclaimPolicy Retain). Its first reconcile applies nothing unless the plan is empty:\n", mod.Namespace, mod.Name)
			fmt.Printf("    kubectl get module -n %s %s\n", mod.Namespace, mod.Name)
			return nil
		}),
	}
	f.bind(cmd)
	cmd.Flags().StringVar(&o.Name, "name", "", "name of the Module and of its ConfigMap <name>-module (default: the directory's name)")
	cmd.Flags().StringVarP(&o.Namespace, "namespace", "n", "terraplane-system", "admin namespace for the Module")
	cmd.Flags().StringSliceVar(&o.ProviderConfigs, "provider-config", nil, "terraform.terraplane.io ProviderConfigs the module's providers use")
	cmd.Flags().StringVar(&o.Claim, "claim", "", "also create a claim bound to the Module, as Kind/namespace/name")
	return cmd
}

func exportCommand() *cobra.Command {
	var f toolsFlags
	var namespace, out string
	cmd := &cobra.Command{
		Use:   "export KIND NAME",
		Short: "Hand a retained managed resource back to plain terraform: module, variables and state in a directory",
		Args:  cobra.ExactArgs(2),
		RunE: f.run(func(ctx context.Context, t migrate.Tools, args []string) error {
			env, err := migrate.Export(ctx, t, args[0], namespace, args[1], out)
			if err != nil {
				return err
			}
			fmt.Printf("Exported to %s; `terraform init && terraform plan` there shows no changes.\n", out)
			if len(env) > 0 {
				fmt.Printf("Set these credentials in the environment first (values not written): %v\n", env)
			}
			fmt.Println("Then delete the managed resource; its reclaimPolicy Retain keeps the infrastructure.")
			return nil
		}),
	}
	f.bind(cmd)
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "terraplane-system", "namespace of the managed resource")
	cmd.Flags().StringVarP(&out, "output", "o", "exported", "directory to write")
	return cmd
}
