package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
)

func moduleCommand() *cobra.Command {
	cmd := group(&cobra.Command{Use: "module", Short: "Work with Terraform modules used as classes",
		Example: "  terraplane module inspect ./modules/postgres --out postgres-class.yaml"})
	var file, name, namespace string
	inspect := &cobra.Command{
		Use:   "inspect DIR",
		Short: "Print a module's inputs and outputs and write a ModuleClass skeleton",
		Long: `Print a module's inputs and outputs and a ModuleClass skeleton for it. --out writes the
skeleton to a file (it was -o before). -o json or -o yaml prints the ModuleClass alone,
its status.variables and status.outputs describing the module, ready for kubectl apply -f -.`,
		Example: `  # print the interface and the skeleton
  terraplane module inspect ./modules/postgres

  # write the skeleton to a file, for a class in another namespace
  terraplane module inspect ./modules/postgres --name team-db -n platform --out team-db.yaml

  # the ModuleClass as YAML, to apply
  terraplane module inspect ./modules/postgres -o yaml | kubectl apply -f -`,
		Args: cobra.ExactArgs(1),
	}
	out := bindOutput(inspect, "--out", "json", "yaml")
	inspect.RunE = func(cmd *cobra.Command, args []string) error {
		dir := args[0]
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("module directory %s does not exist or is not a directory", dir)
		}
		m, err := module.Load(os.DirFS(dir), ".")
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		if name == "" {
			abs, _ := filepath.Abs(args[0])
			name = filepath.Base(abs)
		}
		class, err := classObject(m, name, namespace)
		if err != nil {
			return err
		}
		stdout := cmd.OutOrStdout()
		if out.data() {
			class.Status.Variables, class.Status.Outputs = modsource.Describe(m)
			return out.print(stdout, class)
		}
		printInterface(stdout, m)
		skeleton, err := classSkeleton(class)
		if err != nil {
			return err
		}
		if file == "" || file == "-" {
			fmt.Fprintln(stdout, "---")
			_, err = stdout.Write(skeleton)
			return err
		}
		if err := os.WriteFile(file, skeleton, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nModuleClass skeleton written to %s\n", file)
		return nil
	}
	inspect.Flags().StringVarP(&file, "out", "f", "", "file for the ModuleClass skeleton (default: stdout; was -o)")
	inspect.Flags().StringVar(&name, "name", "", "name of the ModuleClass (default: the directory's name)")
	inspect.Flags().StringVarP(&namespace, "namespace", "n", defaultAdminNamespace, "namespace of the ModuleClass (a non-portable class: the admin namespace)")
	cmd.AddCommand(inspect)
	return cmd
}

// printInterface prints variables and outputs as ModuleClass status describes them.
func printInterface(w io.Writer, m *module.Module) {
	vars, outs := modsource.Describe(m)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIABLE\tTYPE\tREQUIRED\tDEFAULT\tSENSITIVE")
	for _, v := range vars {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%v\n", v.Name, orDash(v.Type), v.Required, orDash(v.Default), v.Sensitive)
	}
	fmt.Fprintln(tw, "\nOUTPUT\tSENSITIVE\t\t\t")
	for _, o := range outs {
		fmt.Fprintf(tw, "%s\t%v\t\t\t\n", o.Name, o.Sensitive)
	}
	_ = tw.Flush()
}

// classObject is a ModuleClass that supplies every required variable from a claim field
// of the same name and publishes every output; the admin edits it from there.
func classObject(m *module.Module, name, namespace string) (*terraformv1.ModuleClass, error) {
	class := &terraformv1.ModuleClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}
	t := &class.SpecTemplate
	t.ReclaimPolicy = common.ReclaimDelete
	t.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: name + "-module"}
	for _, v := range m.Variables {
		if v.Required {
			t.Inputs = append(t.Inputs, terraformv1.InputMapping{FromFieldPath: "spec." + v.Name, ToVariable: v.Name})
		}
	}
	for _, o := range m.Outputs {
		t.Connection = append(t.Connection, terraformv1.ConnectionMapping{FromOutput: o.Name, ToKey: o.Name})
	}
	t.ForProvider = &apiextensionsv1.JSON{Raw: []byte("{}")}
	if err := modsource.Validate(m, *t); err != nil {
		return nil, fmt.Errorf("skeleton does not validate: %w", err)
	}
	return class, nil
}

// classSkeleton is class as commented YAML.
func classSkeleton(class *terraformv1.ModuleClass) ([]byte, error) {
	b, err := yaml.Marshal(class)
	if err != nil {
		return nil, err
	}
	name, namespace := class.Name, class.Namespace
	header := fmt.Sprintf("# ModuleClass for the module in %s. Ship its files in the ConfigMap %s-module\n# (kubectl create configmap %s-module -n %s --from-file=DIR) or point source at git.\n", name, name, name, namespace)
	return append([]byte(header), b...), nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
