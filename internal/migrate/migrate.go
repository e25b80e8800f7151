package migrate

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// Tools are what migrate and export work with.
type Tools struct {
	// Client talks to the control cluster.
	Client client.Client
	// Registry knows the kinds.
	Registry *registry.Registry
	// Engine runs terraform.
	Engine *engine.Engine
	// StateKubeconfig is what terraform's kubernetes backend uses (one path, or several
	// joined as in $KUBECONFIG); empty means in-cluster.
	StateKubeconfig string
	// StateContext is the context of StateKubeconfig to use; empty means its current one.
	StateContext string
	// Progress is told each step as it starts; nil says nothing.
	Progress Progress
}

// Progress reports one step of a long operation.
type Progress func(format string, args ...any)

func (t Tools) progress() Progress {
	if t.Progress == nil {
		return func(string, ...any) {}
	}
	return t.Progress
}

// Options say what to migrate and what to create.
type Options struct {
	// Dir is the Terraform working directory: the root module and terraform.tfstate.
	Dir string
	// Name of the ConfigMap (<name>-module) and Module to create.
	Name string
	// Namespace to create them in (the admin namespace).
	Namespace string
	// ProviderConfigs names terraform.terraplane.io ProviderConfigs for the module's providers.
	ProviderConfigs []string
	// Claim, as Kind/namespace/name, creates a claim bound to the Module.
	Claim string
}

// Migrate takes custody of Dir's state: it reads the state from whatever backend Dir
// uses (terraform state pull), moves every address under the root module's call
// (terraform state mv), creates the module's ConfigMap and a static, paused Module,
// pushes the state into the Module's backend, and unpauses it. The Module is marked
// adopted, so its first reconcile applies nothing unless the plan is empty. Local module
// calls (./modules/...) inside Dir travel with the module.
func Migrate(ctx context.Context, t Tools, o Options) (*terraformv1.Module, error) {
	say := t.progress()
	say("reading the module in %s", o.Dir)
	mod, err := readModule(o.Dir)
	if err != nil {
		return nil, err
	}
	say("reading the state of %s (terraform state pull)", o.Dir)
	state, err := pullState(ctx, t.Engine.TerraformPath(), o.Dir, say)
	if err != nil {
		return nil, err
	}
	if state, err = moveUnderModule(ctx, t.Engine.TerraformPath(), state, say); err != nil {
		return nil, err
	}
	values, err := ReadVarFiles(o.Dir)
	if err != nil {
		return nil, err
	}
	mg, err := t.createPaused(ctx, o, mod, values)
	if err != nil {
		return nil, err
	}
	say("pushing the state into the backend of Module %s/%s (Secret %s)", mg.Namespace, mg.Name, resource.StateSecretName(mg))
	if err := t.pushState(ctx, mg, state); err != nil {
		return nil, err
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, common.PausedAnnotation))
	if err := t.Client.Patch(ctx, mg, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return nil, fmt.Errorf("unpause module: %w", err)
	}
	if o.Claim != "" {
		say("creating the claim %s", o.Claim)
		if err := t.createClaim(ctx, o.Claim, mg); err != nil {
			return nil, err
		}
	}
	return mg, nil
}

// readModule reads the module in dir without what a module never ships (variable files,
// whose values become the Module's inputs, and the dependency lock file), and refuses
// local module calls that leave dir.
func readModule(dir string) (*module.Module, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	mod, err := module.Load(os.DirFS(dir), ".")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	for name := range mod.Files {
		if strings.HasSuffix(name, ".tfvars") || strings.HasSuffix(name, ".tfvars.json") || path.Base(name) == ".terraform.lock.hcl" {
			delete(mod.Files, name)
		}
	}
	for _, c := range mod.Calls {
		if strings.HasPrefix(c.Source, "../") || c.Source == ".." {
			return nil, fmt.Errorf("module %q calls %s, outside %s; migrate the directory that holds both", c.Name, c.Source, dir)
		}
	}
	return mod, nil
}

func (t Tools) createPaused(ctx context.Context, o Options, mod *module.Module, values map[string]any) (*terraformv1.Module, error) {
	cm, err := moduleConfigMap(o.Name+"-module", o.Namespace, mod.Files)
	if err != nil {
		return nil, err
	}
	t.progress()("creating ConfigMap %s/%s with the module (%d files)", cm.Namespace, cm.Name, len(mod.Files))
	if err := t.Client.Create(ctx, cm); err != nil {
		return nil, fmt.Errorf("create module configmap: %w", err)
	}
	forProvider, err := common.FromValues(values)
	if err != nil {
		return nil, err
	}
	mg := &terraformv1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Annotations: map[string]string{
			common.AdoptedAnnotation: "true", common.PausedAnnotation: "true",
		}},
		Spec: terraformv1.ModuleSpec{
			ManagedSpec: common.ManagedSpec{ReclaimPolicy: common.ReclaimRetain},
			ModuleParameters: terraformv1.ModuleParameters{
				Source: terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}},
			},
			ForProvider: forProvider,
		},
	}
	if o.Claim != "" {
		mg.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: o.Name + "-connection"}
	}
	for _, pc := range o.ProviderConfigs {
		mg.Spec.ProviderConfigRefs = append(mg.Spec.ProviderConfigRefs, common.LocalReference{Name: pc})
	}
	t.progress()("creating Module %s/%s (paused until it holds the state)", mg.Namespace, mg.Name)
	if err := t.Client.Create(ctx, mg); err != nil {
		return nil, fmt.Errorf("create module: %w", err)
	}
	return mg, nil
}

// moduleConfigMap holds a flat module one file per key, and a module with
// subdirectories as the single key modsource.TarballKey.
func moduleConfigMap(name, namespace string, files map[string][]byte) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	flat := true
	for name := range files {
		flat = flat && !strings.Contains(name, "/")
	}
	if flat {
		cm.Data = map[string]string{}
		for name, content := range files {
			cm.Data[name] = string(content)
		}
		return cm, nil
	}
	tgz, err := modsource.WriteTarball(files)
	if err != nil {
		return nil, fmt.Errorf("pack the module: %w", err)
	}
	cm.BinaryData = map[string][]byte{modsource.TarballKey: tgz}
	return cm, nil
}

// pushState renders mg's workspace exactly as the controller will and pushes state into its backend.
func (t Tools) pushState(ctx context.Context, mg resource.Managed, state []byte) error {
	kind, ok := t.Registry.Managed(kinds.ModuleGVK)
	if !ok {
		return fmt.Errorf("the Module kind is not registered")
	}
	r, err := workspace.NewRenderer(t.Client, kind, t.StateKubeconfig, t.StateContext)
	if err != nil {
		return err
	}
	ws, err := r.Render(ctx, mg)
	if err != nil {
		return fmt.Errorf("render module: %w", err)
	}
	file := filepath.Join(os.TempDir(), "terraplane-migrate-"+string(mg.GetUID())+".tfstate")
	if err := os.WriteFile(file, state, 0o600); err != nil {
		return err
	}
	defer os.Remove(file)
	return t.Engine.PushState(ctx, ws.Workspace, file)
}

// createClaim makes a claim (Kind/namespace/name) that binds statically to mg, having
// reserved mg for it (spec.claimRef), which lets a claim in another namespace bind it.
func (t Tools) createClaim(ctx context.Context, spec string, mg *terraformv1.Module) error {
	parts := strings.Split(spec, "/")
	if len(parts) != 3 {
		return fmt.Errorf("--claim %q: want Kind/namespace/name", spec)
	}
	for _, ck := range t.Registry.ClaimKinds() {
		if !strings.EqualFold(ck.GVK.Kind, parts[0]) {
			continue
		}
		claim := ck.New()
		claim.SetNamespace(parts[1])
		claim.SetName(parts[2])
		if err := t.reserve(ctx, mg, ck.GVK, parts[1], parts[2]); err != nil {
			return err
		}
		claim.GetClaimSpec().ResourceRef = &common.ObjectReference{APIVersion: kinds.ModuleGVK.GroupVersion().String(),
			Kind: kinds.ModuleGVK.Kind, Name: mg.Name, Namespace: mg.Namespace}
		claim.GetClaimSpec().WriteConnectionSecretToRef = &common.LocalReference{Name: parts[2] + "-connection"}
		if err := t.Client.Create(ctx, claim); err != nil {
			return fmt.Errorf("create claim: %w", err)
		}
		return nil
	}
	return fmt.Errorf("--claim: no claim kind %q (try PostgreSQLInstance, MySQLInstance, Bucket, RedisCluster, KubernetesCluster)", parts[0])
}

// reserve sets mg's spec.claimRef to the claim namespace/name of kind gvk, not yet bound
// (no UID): that claim alone may bind mg.
func (t Tools) reserve(ctx context.Context, mg *terraformv1.Module, gvk schema.GroupVersionKind, namespace, name string) error {
	orig := mg.DeepCopy()
	mg.Spec.ClaimRef = &common.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: namespace, Name: name}
	if err := t.Client.Patch(ctx, mg, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("reserve module for the claim: %w", err)
	}
	return nil
}

// managedKind finds a registered managed kind by its Kind name.
func (t Tools) managedKind(name string) (*registry.ManagedKind, error) {
	var known []string
	for _, k := range t.Registry.TerraformKinds() {
		if strings.EqualFold(k.GVK.Kind, name) || strings.EqualFold(k.GVK.GroupKind().String(), name) {
			return k, nil
		}
		known = append(known, k.GVK.GroupKind().String())
	}
	return nil, fmt.Errorf("no managed kind %q (known: %s)", name, strings.Join(known, ", "))
}
