package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"

	"sigs.k8s.io/controller-runtime/pkg/client"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

// Rendered is a managed resource rendered for the engine.
type Rendered struct {
	engine.Workspace
	// Hash covers every file, the names (not the values) of the environment and the
	// versions of the Secrets and ConfigMaps variables come from; it is
	// stored in status, so rotated credentials take effect at the next drift check.
	Hash string
	// Provider is what the resource's Provider contributed.
	Provider *registry.ProviderConfig
	// Revision names the class revision whose module was rendered (spec.revision); empty
	// when the module was read from its live source.
	Revision string
}

// Renderer turns a managed resource into its Terraform workspace. The reconciler and the
// migrate and export tools share it, so all three see the same configuration.
type Renderer struct {
	client    client.Client
	kind      *registry.ManagedKind
	bundled   *module.Module
	revisions *revision.Modules
	// StateKubeconfig is what terraform's kubernetes backend reads: one path, or several
	// joined as in $KUBECONFIG; empty means in-cluster configuration.
	StateKubeconfig string
	// StateContext is the kubeconfig context the backend uses; empty means the current one.
	StateContext string
	// LocalState renders without a backend, for a workspace handed back to plain terraform.
	LocalState bool
	// StateFromEnvironment renders the kubernetes backend with no cluster settings: the
	// terraform that runs it finds its cluster in its environment (KUBE_CONFIG_PATH, or
	// KUBE_IN_CLUSTER_CONFIG), as a runner pool's runner gives it its own identity.
	StateFromEnvironment bool
}

// NewRenderer prepares a renderer for kind, loading its bundled module once; state goes
// to the cluster of stateKubeconfig at stateContext (both empty: in-cluster).
func NewRenderer(c client.Client, kind *registry.ManagedKind, stateKubeconfig, stateContext string) (*Renderer, error) {
	if kind.Terraform == nil {
		return nil, fmt.Errorf("%s is not served by Terraform", kind.GVK.Kind)
	}
	r := &Renderer{client: c, kind: kind, StateKubeconfig: stateKubeconfig, StateContext: stateContext, revisions: revision.NewModules(0)}
	if kind.Terraform.LoadModule == nil {
		var err error
		if r.bundled, err = module.Load(kind.Terraform.Modules, kind.Terraform.ModuleDir); err != nil {
			return nil, fmt.Errorf("load module for %s: %w", kind.GVK.Kind, err)
		}
	}
	return r, nil
}

// Render resolves mg's Provider and module and renders its workspace.
func (r *Renderer) Render(ctx context.Context, mg resource.Managed) (*Rendered, error) {
	mod, rev, err := r.module(ctx, mg)
	if err != nil {
		return nil, err
	}
	pc, err := r.kind.Terraform.ResolveProvider(ctx, revision.WithProviderConfigs(r.client, rev, r.kind.ProviderGVK), mg)
	if err != nil {
		return nil, err
	}
	values, err := mg.GetForProvider()
	if err != nil {
		return nil, resource.UserErrorf("InvalidForProvider", "spec.forProvider: %v", err)
	}
	if !r.kind.Terraform.InputsAreVariables {
		values = render.SnakeKeys(values)
	}
	observed, err := r.observe(ctx, mg, pc)
	if err != nil {
		return nil, err
	}
	for _, inputs := range []map[string]any{pc.Inputs, observed} {
		for k, v := range inputs {
			if _, declared := mod.Variable(k); declared {
				values[k] = v
			}
		}
	}
	var imports []render.Import
	for _, im := range mg.GetManagedSpec().Imports {
		imports = append(imports, render.Import{Address: im.Address, ID: im.ID})
	}
	vars, err := r.variables(ctx, mg)
	if err != nil {
		return nil, err
	}
	for name, raw := range vars.Plain {
		values[name] = variableValue(mod, name, raw)
	}
	secretVars := make(map[string]any, len(vars.Secret))
	for name, raw := range vars.Secret {
		secretVars[name] = variableValue(mod, name, raw)
	}
	files, err := render.Render(render.Input{Module: mod, Values: values, Providers: pc.Providers, Backend: r.backend(), Imports: imports,
		SecretVariables: slices.Sorted(maps.Keys(secretVars))})
	if err != nil {
		return nil, resource.UserErrorf("InvalidForProvider", "spec.forProvider does not fit the module: %v", err)
	}
	group := r.kind.ProviderGVK.Group + "/" + mg.GetNamespace()
	if ref := mg.GetManagedSpec().ProviderRef; ref != nil {
		group += "/" + ref.Name
	}
	base := Ref(mg)
	base.Kind = r.kind.GVK.GroupKind().String()
	base.Group, base.Files, base.Env, base.SecretVars, base.BackendConfig = group, files.Files, pc.Env, secretVars, r.backendConfig(mg)
	base.Timeout = mg.GetManagedSpec().Timing.TimeoutOr(0)
	if base.Lock, err = r.lock(ctx, mg, mod, rev); err != nil {
		return nil, err
	}
	ws := &Rendered{Workspace: base, Provider: pc}
	if rev != nil {
		ws.Revision = rev.Name
	}
	ws.Hash = hashWorkspace(ws.Workspace, vars.Sources)
	return ws, nil
}

// lock is the dependency lock mg runs with: the lock of the class revision it moves to,
// when that revision keeps one (a module's own, or a provider upgrade's); else the one it
// last ran with; or for a resource that never ran, its module's own (committed beside a
// bundled module, or shipped with it), else the one its class recorded at the first init
// of the module; nil when there is none.
func (r *Renderer) lock(ctx context.Context, mg resource.Managed, mod *module.Module, rev *terraformv1.ClassRevision) ([]byte, error) {
	own := mg.GetManagedStatus().Terraform.ProviderLock
	if rev != nil && rev.Spec.ProviderLock != "" && (own == "" || mg.GetManagedStatus().Revision != rev.Name) {
		return []byte(rev.Spec.ProviderLock), nil
	}
	if own != "" {
		return []byte(own), nil
	}
	if mod.Lock != nil || r.kind.Terraform.ClassLock == nil {
		return mod.Lock, nil
	}
	return r.kind.Terraform.ClassLock(ctx, r.client, mg)
}

// variableValue is raw as the variable's type wants it: text for a string (or a value
// that is no JSON), the decoded JSON otherwise, e.g. 3 for a number or a map for map(string).
func variableValue(mod *module.Module, name, raw string) any {
	if v, ok := mod.Variable(name); ok && v.Type != "string" {
		var decoded any
		if json.Unmarshal([]byte(raw), &decoded) == nil {
			return decoded
		}
	}
	return raw
}

// observe reads what mg's external resource is now, for kinds whose module cannot.
func (r *Renderer) observe(ctx context.Context, mg resource.Managed, pc *registry.ProviderConfig) (map[string]any, error) {
	if r.kind.Terraform.ObserveInputs == nil {
		return nil, nil
	}
	return r.kind.Terraform.ObserveInputs(ctx, mg, pc)
}

// variables reads the variables mg takes from Secrets and ConfigMaps, if its kind has any.
func (r *Renderer) variables(ctx context.Context, mg resource.Managed) (*registry.Variables, error) {
	if r.kind.Terraform.ResolveVariables == nil {
		return &registry.Variables{}, nil
	}
	return r.kind.Terraform.ResolveVariables(ctx, r.client, mg)
}

// module returns the module mg runs, and the revision it comes from: its class revision's
// (spec.revision), else (no revision) the kind's bundled module or the one its loader
// picks. A resource being deleted whose revision is gone (with its class) is destroyed
// with the live module.
func (r *Renderer) module(ctx context.Context, mg resource.Managed) (*module.Module, *terraformv1.ClassRevision, error) {
	if spec := mg.GetManagedSpec(); spec.Revision != "" && spec.ClassRef != nil {
		rev, err := revision.Get(ctx, r.client, mg.GetNamespace(), spec.Revision, *spec.ClassRef)
		_, gone := resource.AsUserError(err)
		switch {
		case err == nil:
			mod, err := r.revisions.Module(rev)
			return mod, rev, err
		case !gone || mg.GetDeletionTimestamp().IsZero():
			return nil, nil, err
		}
	}
	if r.kind.Terraform.LoadModule != nil {
		mod, err := r.kind.Terraform.LoadModule(ctx, r.client, mg)
		return mod, nil, err
	}
	return r.bundled, nil, nil
}

// backend keeps state in a Secret in the resource's namespace, named after its UID: the
// block in the files holds what every workspace shares, and backendConfig the rest.
func (r *Renderer) backend() render.Backend {
	if r.LocalState {
		return render.Backend{}
	}
	cfg := map[string]any{}
	if r.StateFromEnvironment {
		return render.Backend{Type: "kubernetes", Config: cfg}
	}
	switch paths := filepath.SplitList(r.StateKubeconfig); len(paths) {
	case 0:
		cfg["in_cluster_config"] = true
	case 1:
		cfg["config_path"] = paths[0]
	default:
		cfg["config_paths"] = paths
	}
	if r.StateContext != "" {
		cfg["config_context"] = r.StateContext
	}
	return render.Backend{Type: "kubernetes", Config: cfg}
}

// backendConfig are the backend settings of mg's workspace alone (the state Secret's
// name and namespace). Kept out of the files, they let every workspace of one module
// share one terraform init.
func (r *Renderer) backendConfig(mg resource.Managed) map[string]string {
	if r.LocalState {
		return nil
	}
	return Ref(mg).BackendConfig
}

// Ref names mg's workspace without rendering it: its ID, where its state is kept and
// the runner pool that runs it; enough to release its lock or remove its directory.
func Ref(mg resource.Managed) engine.Workspace {
	return engine.Workspace{ID: string(mg.GetUID()), Kind: mg.GetObjectKind().GroupVersionKind().GroupKind().String(), Name: mg.GetNamespace() + "/" + mg.GetName(),
		BackendConfig: map[string]string{"secret_suffix": resource.StateSuffix(mg), "namespace": mg.GetNamespace()},
		Pool:          mg.GetManagedSpec().RunnerPool, Order: mg.GetCreationTimestamp().Time}
}

// hashWorkspace covers the files, the environment's names and the sources of variables
// read from Secrets and ConfigMaps (by resourceVersion): never a secret value.
func hashWorkspace(ws engine.Workspace, sources []string) string {
	h := sha256.New()
	module.WriteFiles(h, ws.Files, nil)
	keys := make([]string, 0, len(ws.Env))
	for k := range ws.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00", k) // names only: a hash of secret values must not reach status
	}
	for _, src := range sources {
		fmt.Fprintf(h, "%s\x00", src)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}
