package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
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
	var providerConfigs []string
	inspect := &cobra.Command{
		Use:   "inspect SOURCE",
		Short: "Print a module's inputs, outputs and providers, and write a ModuleClass skeleton",
		Long: `Print a module's inputs, outputs and the providers it requires, and a ModuleClass skeleton
for it with a ProviderConfig to fill in for each provider that takes configuration.
SOURCE is a directory, a git source (git::https://host/org/repo.git//path?ref=v1) or an
OCI artifact (oci://registry/org/module:v1), as for terraplane claim generate. --out
writes the skeleton to a file (it was -o before). -o json or -o yaml prints the
ModuleClass alone, its status.variables and status.outputs describing the module, ready
for kubectl apply -f -.`,
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
		src, err := parseModuleSource(args[0])
		if err != nil {
			return err
		}
		m, err := src.load(cmd.Context())
		if err != nil {
			return err
		}
		if name == "" {
			name = src.defaultName()
		}
		providers, err := planProviders(m, namespace, providerConfigs)
		if err != nil {
			return err
		}
		class, err := classObject(m, src, providers, name, namespace)
		if err != nil {
			return err
		}
		stdout := cmd.OutOrStdout()
		if out.data() {
			class.Status.Variables, class.Status.Outputs = modsource.Describe(m)
			return out.print(stdout, class)
		}
		printInterface(stdout, m, providers)
		skeleton, err := classSkeleton(class, src, providers)
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
	inspect.Flags().StringVar(&file, "out", "", "file for the ModuleClass skeleton (default: stdout; was -o)")
	inspect.Flags().StringVar(&name, "name", "", "name of the ModuleClass (default: the directory's, or the source path's, last element)")
	inspect.Flags().StringVarP(&namespace, "namespace", "n", defaultAdminNamespace, "namespace of the ModuleClass (a non-portable class: the admin namespace)")
	inspect.Flags().StringSliceVar(&providerConfigs, "provider-config", nil, "LOCAL=NAME: the module's provider LOCAL (e.g. aws) is configured by the existing ProviderConfig NAME (providerconfigs.terraform.terraplane.io); no stub is written for it")
	cmd.AddCommand(inspect)
	return cmd
}

// printInterface prints variables and outputs as ModuleClass status describes them, and
// the providers the module requires.
func printInterface(w io.Writer, m *module.Module, providers *providerPlan) {
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
	fmt.Fprintln(tw, "\nPROVIDER\tSOURCE\tVERSION\tCONFIGURED BY\t")
	for _, r := range providers.reqs {
		by := "(needs none)"
		if module.NeedsConfiguration(r.Source) {
			by = "tfpc/" + providers.configFor(r.Name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", r.Name, strings.TrimPrefix(r.Source, module.DefaultRegistry+"/"), orDash(r.Constraints), by)
	}
	_ = tw.Flush()
}

// classObject is a ModuleClass that supplies every required variable from a claim field
// of the same name, configures the module's providers and publishes every output; the
// admin edits it from there.
func classObject(m *module.Module, src moduleSource, providers *providerPlan, name, namespace string) (*terraformv1.ModuleClass, error) {
	class := &terraformv1.ModuleClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}
	t := &class.SpecTemplate
	t.ReclaimPolicy = common.ReclaimDelete
	t.Source = src.classSource(name + "-module")
	t.ProviderConfigRefs = providers.refs
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

// classSkeleton is the ProviderConfig stubs and the class, as commented YAML.
func classSkeleton(class *terraformv1.ModuleClass, src moduleSource, providers *providerPlan) ([]byte, error) {
	var buf bytes.Buffer
	for _, pc := range providers.stubs {
		b, err := yaml.Marshal(pc)
		if err != nil {
			return nil, err
		}
		buf.WriteString(stubHint(pc))
		buf.Write(stripStatus(b))
		buf.WriteString("\n---\n")
	}
	b, err := yaml.Marshal(class)
	if err != nil {
		return nil, err
	}
	if src.dir != "" {
		fmt.Fprintf(&buf, "# ModuleClass for the module in %s. Ship its files in the ConfigMap %s-module: terraplane claim generate\n# writes it, local modules included (kubectl create configmap --from-file leaves subdirectories out); or point source at git or OCI.\n", src.dir, class.Name)
	}
	buf.Write(stripStatus(b))
	buf.WriteString("\n")
	return buf.Bytes(), nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
