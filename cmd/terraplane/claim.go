package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/claimschema"
	"terraplane.io/terraplane/internal/module"
)

// claimCommand is `terraplane claim generate` for platform teams.
func claimCommand() *cobra.Command {
	cmd := group(&cobra.Command{Use: "claim", Short: "Define claim kinds from Terraform modules",
		Example: "  terraplane claim generate ./modules/network --kind Network --group platform.example.org"})
	var kind, group, plural, name, namespace, file string
	var allow []string
	gen := &cobra.Command{
		Use:   "generate DIR",
		Short: "Print a ClaimDefinition and ModuleClass skeleton for the module in DIR",
		Long: `Prints a ModuleClass for the module in DIR and a ClaimDefinition whose claim kind takes
the module's variables as spec.parameters (name for name; sensitive ones as <name>SecretRef).
It checks that the schema can be generated and lists the validation rules that stay with
terraform because they have no CEL equivalent. --out writes them to a file (it was -o
before); -o json or -o yaml prints them as a List, without the comments.`,
		Example: `  terraplane claim generate ./modules/network --kind Network --group platform.example.org | kubectl apply -f -
  terraplane claim generate ./modules/network --kind Network --group platform.example.org --out network.yaml
  terraplane claim generate ./modules/network --kind Network --group platform.example.org -o json`,
		Args: cobra.ExactArgs(1),
	}
	out := bindOutput(gen, "--out", "json", "yaml")
	gen.RunE = func(cmd *cobra.Command, args []string) error {
		dir := args[0]
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return fmt.Errorf("module directory %s does not exist or is not a directory", dir)
		}
		m, err := module.Load(os.DirFS(dir), ".")
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		if name == "" {
			abs, _ := filepath.Abs(dir)
			name = filepath.Base(abs)
		}
		if plural == "" {
			plural = strings.ToLower(kind) + "s"
		}
		if out.data() {
			class, def, _, err := claimObjects(m, kind, group, plural, name, namespace, allow)
			if err != nil {
				return err
			}
			return out.print(cmd.OutOrStdout(), map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{class, def}})
		}
		b, err := claimSkeleton(m, kind, group, plural, name, namespace, allow)
		if err != nil {
			return err
		}
		if file == "" || file == "-" {
			_, err = cmd.OutOrStdout().Write(b)
			return err
		}
		return os.WriteFile(file, b, 0o644)
	}
	gen.Flags().StringVar(&kind, "kind", "", "claim kind, e.g. Network (required)")
	gen.Flags().StringVar(&group, "group", "", "API group of the claim kind, e.g. platform.example.org (required)")
	gen.Flags().StringVar(&plural, "plural", "", "plural resource name (default: the kind in lower case + s)")
	gen.Flags().StringVar(&name, "name", "", "name of the ModuleClass (default: the directory's name)")
	gen.Flags().StringVarP(&namespace, "namespace", "n", defaultAdminNamespace, "namespace of the ModuleClass (a non-portable class: the admin namespace)")
	gen.Flags().StringSliceVar(&allow, "allow-namespace", nil, "namespace whose portable classes may point at the ModuleClass (its allowedNamespaces; repeat or comma-separate; \"*\" for all)")
	gen.Flags().StringVarP(&file, "out", "f", "", "file to write (default: stdout; was -o)")
	_ = gen.MarkFlagRequired("kind")
	_ = gen.MarkFlagRequired("group")
	cmd.AddCommand(gen)
	return cmd
}

// claimObjects are a ModuleClass (every output published, no input mappings: a defined
// kind's parameters reach the variables by name, and portable classes in the
// namespaces allow lists may point at it) and a ClaimDefinition from it, with the
// generated schema.
func claimObjects(m *module.Module, kind, group, plural, name, namespace string, allow []string) (*terraformv1.ModuleClass, *apiextv1.ClaimDefinition, *claimschema.Result, error) {
	vars, err := claimschema.ParseVariables(m.Files)
	if err != nil {
		return nil, nil, nil, err
	}
	res, err := claimschema.Generate(vars, claimschema.Options{})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generate the claim schema: %w", err)
	}
	class := &terraformv1.ModuleClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
	}
	if len(allow) > 0 {
		class.AllowedNamespaces = &common.AllowedNamespaces{Names: allow}
	}
	class.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
	class.SpecTemplate.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: name + "-module"}
	for _, o := range m.Outputs {
		class.SpecTemplate.Connection = append(class.SpecTemplate.Connection, terraformv1.ConnectionMapping{FromOutput: o.Name, ToKey: o.Name})
	}
	def := &apiextv1.ClaimDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiextv1.GroupVersion.String(), Kind: "ClaimDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextv1.ClaimDefinitionSpec{Group: group, Names: apiextv1.ClaimDefinitionNames{Kind: kind, Plural: plural},
			FromModule: &apiextv1.FromModule{ModuleClassRef: apiextv1.ModuleClassReference{Name: name, Namespace: namespace}}},
	}
	return class, def, res, nil
}

// claimSkeleton writes claimObjects as commented YAML.
func claimSkeleton(m *module.Module, kind, group, plural, name, namespace string, allow []string) ([]byte, error) {
	class, def, res, err := claimObjects(m, kind, group, plural, name, namespace, allow)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# ModuleClass for the module in %s. Ship its files in the ConfigMap %s-module\n# (kubectl create configmap %s-module -n %s --from-file=DIR) or point source at git.\n", name, name, name, namespace)
	fmt.Fprintf(&buf, "# A portable %sClass in another namespace may point at it only when its\n# allowedNamespaces lists that namespace (--allow-namespace).\n", kind)
	for _, obj := range []any{class, def} {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		buf.Write(stripStatus(b))
		if obj == class {
			fmt.Fprintf(&buf, "---\n# %s claims take spec.parameters:", kind)
			for _, p := range sortedKeys(res.Parameters.Properties) {
				fmt.Fprintf(&buf, " %s", p)
			}
			fmt.Fprintln(&buf)
			for _, u := range res.Untranslated {
				fmt.Fprintf(&buf, "# not checked by the API server (terraform checks it at plan): %s: %s (%s)\n", u.Variable, u.Condition, u.Reason)
			}
		}
	}
	return buf.Bytes(), nil
}

// stripStatus drops the empty status and creationTimestamp a skeleton has no use for.
func stripStatus(b []byte) []byte {
	var out []string
	skip := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case line == "status:" || strings.HasPrefix(line, "status: "):
			skip = line == "status:"
			continue
		case skip && strings.HasPrefix(line, " "):
			continue
		case strings.TrimSpace(line) == "creationTimestamp: null":
			continue
		}
		skip = false
		out = append(out, line)
	}
	return []byte(strings.Join(out, "\n"))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
