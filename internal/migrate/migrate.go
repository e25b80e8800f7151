package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
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
	// StateKubeconfig is what terraform's kubernetes backend uses; empty means in-cluster.
	StateKubeconfig string
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

// Migrate takes custody of Dir's state: it creates the module's ConfigMap and a static,
// paused Module, pushes the state (addresses moved under the root module's call) into the
// Module's backend, and unpauses it. The Module is marked adopted, so its first reconcile
// applies nothing unless the plan is empty.
func Migrate(ctx context.Context, t Tools, o Options) (*terraformv1.Module, error) {
	mod, err := module.Load(os.DirFS(o.Dir), ".")
	if err != nil {
		return nil, err
	}
	for name := range mod.Files {
		if strings.Contains(name, "/") {
			return nil, fmt.Errorf("module file %s is in a subdirectory; ConfigMap sources hold flat modules (use a git source)", name)
		}
	}
	state, err := movedState(filepath.Join(o.Dir, "terraform.tfstate"))
	if err != nil {
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
	if err := t.pushState(ctx, mg, state); err != nil {
		return nil, err
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, resource.PausedAnnotation))
	if err := t.Client.Patch(ctx, mg, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return nil, fmt.Errorf("unpause module: %w", err)
	}
	if o.Claim != "" {
		if err := t.createClaim(ctx, o.Claim, mg); err != nil {
			return nil, err
		}
	}
	return mg, nil
}

func (t Tools) createPaused(ctx context.Context, o Options, mod *module.Module, values map[string]any) (*terraformv1.Module, error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-module", Namespace: o.Namespace}, Data: map[string]string{}}
	for name, content := range mod.Files {
		cm.Data[name] = string(content)
	}
	if err := t.Client.Create(ctx, cm); err != nil {
		return nil, fmt.Errorf("create module configmap: %w", err)
	}
	forProvider, err := common.FromValues(values)
	if err != nil {
		return nil, err
	}
	mg := &terraformv1.Module{
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Annotations: map[string]string{
			resource.AdoptedAnnotation: "true", resource.PausedAnnotation: "true",
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
	if err := t.Client.Create(ctx, mg); err != nil {
		return nil, fmt.Errorf("create module: %w", err)
	}
	return mg, nil
}

// pushState renders mg's workspace exactly as the controller will and pushes state into its backend.
func (t Tools) pushState(ctx context.Context, mg resource.Managed, state []byte) error {
	kind, ok := t.Registry.Managed(kinds.ModuleGVK)
	if !ok {
		return fmt.Errorf("the Module kind is not registered")
	}
	r, err := workspace.NewRenderer(t.Client, kind, t.StateKubeconfig)
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

// movedState reads a state file and moves every resource under the root module's call of
// the module, where Terraplane's generated root module keeps it.
func movedState(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	var state map[string]any
	if err := json.Unmarshal(raw, &state); err != nil {
		return nil, fmt.Errorf("parse state %s: %w", path, err)
	}
	if v, _ := state["version"].(float64); v != 4 {
		return nil, fmt.Errorf("state %s has format version %v; only version 4 (terraform >= 0.12) is supported", path, state["version"])
	}
	resources, _ := state["resources"].([]any)
	for _, r := range resources {
		res, _ := r.(map[string]any)
		prefix := "module." + render.ModuleName
		if m, _ := res["module"].(string); m != "" {
			prefix += "." + m
		}
		res["module"] = prefix
	}
	delete(state, "check_results")
	return json.MarshalIndent(state, "", "  ")
}

// createClaim makes a claim (Kind/namespace/name) that binds statically to mg.
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
