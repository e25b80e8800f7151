package main

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/claimschema"
	"terraplane.io/terraplane/internal/module"
)

// claimOptions are the flags of `terraplane claim generate`.
type claimOptions struct {
	kind, group, plural, name, namespace, file string
	allow, providerConfigs                     []string
	inferAny, allowNameConflict                bool
	kube                                       kubeFlags
}

// claimCommand is `terraplane claim generate` for platform teams.
func claimCommand() *cobra.Command {
	cmd := group(&cobra.Command{Use: "claim", Short: "Define claim kinds from Terraform modules",
		Example: "  terraplane claim generate ./modules/network --kind Network --group platform.example.org"})
	o := &claimOptions{}
	gen := &cobra.Command{
		Use:   "generate SOURCE",
		Short: "Print the manifests that make the module at SOURCE a claim kind",
		Long: `Prints what makes the module at SOURCE a claim kind, ready for kubectl apply: for a local
directory a ConfigMap holding the module (its local modules included), a ProviderConfig
to fill in for each provider the module requires, a ModuleClass, and a ClaimDefinition
whose claim kind takes the module's variables as spec.parameters (name for name;
sensitive ones as <name>SecretRef).

SOURCE is a directory, a git repository as terraform writes it
(git::https://host/org/repo.git//modules/vpc?ref=v1.2.0; https://, ssh://, file:// and
git@host:path too), or an OCI artifact (oci://registry/org/module:v1[//path]); git and
OCI sources are read anonymously, through the code the controller uses, and the
ModuleClass names them.

It checks that the schema can be generated, lists the validation rules that stay with
terraform, and refuses a kind or plural that Terraplane, Kubernetes or (when a cluster is
reachable with --kubeconfig/--context or kubectl's defaults) the cluster serves in
another group. --out writes the manifests to a file (it was -o before); -o json or -o yaml
prints them as a List, without the comments.`,
		Example: `  terraplane claim generate ./modules/network --kind Network --group platform.example.org > network.yaml
  terraplane claim generate ./modules/network --kind Network --group platform.example.org --provider-config aws=aws-prod --out network.yaml
  terraplane claim generate 'git::https://git.example.com/platform/modules.git//vpc?ref=v1.4.0' --kind Vpc --group platform.example.org
  terraplane claim generate oci://registry.example.com/modules/db:v2 --kind Database --group platform.example.org -o json`,
		Args: cobra.ExactArgs(1),
	}
	out := bindOutput(gen, "--out", "json", "yaml")
	gen.RunE = func(cmd *cobra.Command, args []string) error {
		return o.run(cmd, args[0], out)
	}
	f := gen.Flags()
	f.StringVar(&o.kind, "kind", "", "claim kind, e.g. Network (required)")
	f.StringVar(&o.group, "group", "", "API group of the claim kind, e.g. platform.example.org (required)")
	f.StringVar(&o.plural, "plural", "", "plural resource name (default: the kind in lower case + s)")
	f.StringVar(&o.name, "name", "", "name of the ModuleClass (default: the directory's, or the source path's, last element)")
	f.StringVarP(&o.namespace, "namespace", "n", defaultAdminNamespace, "namespace of the ModuleClass, its ConfigMap and ProviderConfigs (a non-portable class: the admin namespace)")
	f.StringSliceVar(&o.allow, "allow-namespace", nil, "namespace whose portable classes may point at the ModuleClass (its allowedNamespaces; repeat or comma-separate; \"*\" for all)")
	f.StringSliceVar(&o.providerConfigs, "provider-config", nil, "LOCAL=NAME: the module's provider LOCAL (e.g. aws) is configured by the existing ProviderConfig NAME (providerconfigs.terraform.terraplane.io); no stub is written for it")
	f.BoolVar(&o.inferAny, "infer-any", false, "type variables of type any from their defaults (spec.fromModule.inferAnyFromDefaults)")
	f.BoolVar(&o.allowNameConflict, "allow-name-conflict", false, "generate a kind or plural that another group serves too")
	f.StringVar(&o.file, "out", "", "file to write (default: stdout; was -o)")
	o.kube.bind(f)
	_ = gen.MarkFlagRequired("kind")
	_ = gen.MarkFlagRequired("group")
	cmd.AddCommand(gen)
	return cmd
}

// run generates the manifests for the module at arg.
func (o *claimOptions) run(cmd *cobra.Command, arg string, out *output) error {
	src, err := parseModuleSource(arg)
	if err != nil {
		return err
	}
	m, err := src.load(cmd.Context())
	if err != nil {
		return err
	}
	if o.name == "" {
		o.name = src.defaultName()
	}
	if o.plural == "" {
		o.plural = strings.ToLower(o.kind) + "s"
	}
	if err := o.checkNames(cmd); err != nil {
		return err
	}
	g, err := o.generate(m, src)
	if err != nil {
		return err
	}
	if out.data() {
		return out.print(cmd.OutOrStdout(), map[string]any{"apiVersion": "v1", "kind": "List", "items": g.objects()})
	}
	b, err := g.yaml(arg)
	if err != nil {
		return err
	}
	if o.file == "" || o.file == "-" {
		_, err = cmd.OutOrStdout().Write(b)
		return err
	}
	return os.WriteFile(o.file, b, 0o644)
}

// generated is what claim generate makes.
type generated struct {
	configMap *corev1.ConfigMap
	providers *providerPlan
	class     *terraformv1.ModuleClass
	def       *apiextv1.ClaimDefinition
	schema    *claimschema.Result
	kind      string
}

// generate makes the objects: the ConfigMap of a local module, the ProviderConfig stubs,
// a ModuleClass (every output published, the providers configured, consent to the
// namespaces allow names) and a ClaimDefinition from it, with the generated schema.
func (o *claimOptions) generate(m *module.Module, src moduleSource) (*generated, error) {
	vars, err := claimschema.ParseVariables(m.Files)
	if err != nil {
		return nil, err
	}
	res, err := claimschema.Generate(vars, claimschema.Options{InferAnyFromDefaults: o.inferAny})
	if err != nil {
		return nil, fmt.Errorf("generate the claim schema: %w", err)
	}
	if _, problems := m.LocalModules(); len(problems) > 0 {
		return nil, fmt.Errorf("the module is incomplete: %s", strings.Join(problems, "; "))
	}
	g := &generated{schema: res, kind: o.kind}
	if g.providers, err = planProviders(m, o.namespace, o.providerConfigs); err != nil {
		return nil, err
	}
	if src.dir != "" {
		cm, err := moduleConfigMap(m, o.name+"-module", o.namespace)
		if err != nil {
			return nil, err
		}
		g.configMap = cm
	}
	g.class = &terraformv1.ModuleClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass"},
		ObjectMeta: metav1.ObjectMeta{Name: o.name, Namespace: o.namespace},
	}
	if len(o.allow) > 0 {
		g.class.AllowedNamespaces = &common.AllowedNamespaces{Names: o.allow}
	}
	t := &g.class.SpecTemplate
	t.ReclaimPolicy = common.ReclaimDelete
	t.Source = src.classSource(o.name + "-module")
	t.ProviderConfigRefs = g.providers.refs
	for _, out := range m.Outputs {
		t.Connection = append(t.Connection, terraformv1.ConnectionMapping{FromOutput: out.Name, ToKey: out.Name})
	}
	g.def = &apiextv1.ClaimDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiextv1.GroupVersion.String(), Kind: "ClaimDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: o.plural + "." + o.group},
		Spec: apiextv1.ClaimDefinitionSpec{Group: o.group, Names: apiextv1.ClaimDefinitionNames{Kind: o.kind, Plural: o.plural},
			FromModule: &apiextv1.FromModule{ModuleClassRef: apiextv1.ModuleClassReference{Name: o.name, Namespace: o.namespace},
				InferAnyFromDefaults: o.inferAny}},
	}
	return g, nil
}

// objects are the manifests in the order they apply.
func (g *generated) objects() []any {
	var out []any
	if g.configMap != nil {
		out = append(out, g.configMap)
	}
	for _, pc := range g.providers.stubs {
		out = append(out, pc)
	}
	return append(out, g.class, g.def)
}

// yaml writes the objects as one commented YAML stream.
func (g *generated) yaml(source string) ([]byte, error) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# Generated by terraplane claim generate from %s; apply with kubectl apply -f.\n", source)
	g.providers.writeHeader(&buf)
	for i, obj := range g.objects() {
		if i > 0 {
			buf.WriteString("---\n")
		}
		g.comment(&buf, obj)
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		buf.Write(stripStatus(b))
		buf.WriteString("\n")
	}
	return buf.Bytes(), nil
}

// comment writes what a person should know about obj before it.
func (g *generated) comment(buf *bytes.Buffer, obj any) {
	switch o := obj.(type) {
	case *terraformv1.ProviderConfig:
		buf.WriteString(stubHint(o))
	case *terraformv1.ModuleClass:
		fmt.Fprintf(buf, "# ModuleClass %s. A portable %sClass in another namespace may point at it only when\n# its allowedNamespaces lists that namespace (--allow-namespace).\n", o.Name, g.kind)
	case *apiextv1.ClaimDefinition:
		fmt.Fprintf(buf, "# %s claims take spec.parameters:", g.kind)
		for _, p := range sortedKeys(g.schema.Parameters.Properties) {
			fmt.Fprintf(buf, " %s", p)
		}
		fmt.Fprintln(buf)
		for _, u := range g.schema.Untranslated {
			fmt.Fprintf(buf, "# not checked by the API server (terraform checks it at plan): %s: %s (%s)\n", u.Variable, u.Condition, u.Reason)
		}
	default:
		fmt.Fprintln(buf, "# The module's files (local modules included), for the ModuleClass's source.")
	}
}

// stripStatus drops the empty status and creationTimestamp a skeleton has no use for.
func stripStatus(b []byte) []byte {
	var out []string
	skip := false
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
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
