package registry

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
)

// ProviderConfig is what a Provider contributes to one workspace.
type ProviderConfig struct {
	// Providers are the provider blocks to render.
	Providers []render.Provider
	// Env holds secret settings for the terraform process (credentials).
	Env map[string]string
	// Inputs are extra module inputs; only those the module declares are passed.
	Inputs map[string]any
	// Connection holds the connection details the Provider offers (its own credentials,
	// only where the Provider allows handing them out); a kind takes only those it names
	// in ProviderConnectionKeys, and only for keys its outputs leave empty.
	Connection map[string][]byte
}

// ProviderResolver reads the Provider(s) a managed resource references and returns their
// configuration. A missing Provider or Secret is a *resource.UserError.
type ProviderResolver func(ctx context.Context, c client.Client, mg resource.Managed) (*ProviderConfig, error)

// ModuleLoader returns the module a managed resource is rendered from, for kinds whose
// module is chosen per resource (such as Module) rather than bundled.
type ModuleLoader func(ctx context.Context, c client.Client, mg resource.Managed) (*module.Module, error)

// ManagedKind registers one managed resource kind.
type ManagedKind struct {
	// GVK of the managed kind.
	GVK schema.GroupVersionKind
	// New returns an empty object of the kind; AddManaged derives it from the scheme.
	New func() resource.Managed
	// NewList returns an empty list of the kind (<Kind>List); AddManaged derives it from the scheme.
	NewList func() client.ObjectList
	// ClassGVK is the non-portable class kind that makes resources of this kind.
	ClassGVK schema.GroupVersionKind
	// NewClass returns an empty class object; AddManaged derives it from the scheme.
	NewClass func() resource.NonPortableClass
	// ProviderGVK is the Provider kind that providerRef names.
	ProviderGVK schema.GroupVersionKind
	// Meets maps each claim kind this kind can satisfy to the configurator that makes one
	// from a claim; the registry adds them to the claim kinds' Configurators.
	Meets map[schema.GroupVersionKind]Configurator
	// Terraform, when set, says the Terraform Connector (controllers/terraform) serves
	// the kind, and how. Nil means a native kind served by its own Connector
	// (controllers/kubernetes): the claim reconciler binds it like any other kind, and
	// only GVK, New, NewList, ClassGVK, NewClass and ProviderGVK are used.
	Terraform *TerraformKind
}

// Class is the class kind that makes resources of k, as the resource package reads it.
func (k *ManagedKind) Class() resource.ClassKind {
	return resource.ClassKind{GVK: k.ClassGVK, New: k.NewClass}
}

// TerraformKind is how the Terraform Connector serves a managed kind: its module, how
// its Provider becomes provider configuration, which outputs become connection keys, and
// how an interrupted create carries on.
type TerraformKind struct {
	// Modules holds the bundled module; ModuleDir is its directory inside. Unused when LoadModule is set.
	Modules fs.FS
	// ModuleDir is the module's directory inside Modules.
	ModuleDir string
	// ResolveProvider turns providerRef into provider configuration.
	ResolveProvider ProviderResolver
	// ConnectionKeys maps module outputs to connection Secret keys.
	ConnectionKeys map[string]string
	// ProviderConnectionKeys are the keys of the Provider's connection details
	// (ProviderConfig.Connection) this kind may hand out where its outputs leave them
	// empty. Empty, the default, hands out outputs only: a Provider's credentials reach a
	// connection Secret only through a kind that names them here.
	ProviderConnectionKeys []string
	// InputsAreVariables says forProvider keys are module variable names already;
	// otherwise camelCase field names are turned into snake_case variable names.
	InputsAreVariables bool
	// LoadModule, when set, chooses the module per resource.
	LoadModule ModuleLoader
	// ConnectionKeysFor, when set, maps outputs to keys per resource.
	ConnectionKeysFor func(mg resource.Managed) map[string]string
	// HarmlessReplacements are addresses in the module (e.g. terraform_data.converge)
	// whose replacement destroys nothing outside Terraform, such as a step that converges
	// the real resource again: the destructive-change guardrail lets them through.
	HarmlessReplacements []string
	// RecoverCreate, when set, says how to carry on after a create was interrupted and
	// left no state: import what it may have made by the identity the resource fixes in
	// advance (ok, with imports), or run again because the module's create converges (ok,
	// no imports). ok false means the identity is not fixed and the user must decide. pc
	// is what the resource's Provider contributed (say, the project or subscription an
	// import ID names); it may be nil.
	RecoverCreate func(mg resource.Managed, pc *ProviderConfig) (imports []common.ImportInstruction, ok bool)
	// ObserveInputs, when set, reads before each plan what the external resource is now,
	// as module inputs, for modules that cannot read it themselves: terraform then sees
	// drift by comparing them with the resource's inputs. An error stops the run.
	ObserveInputs func(ctx context.Context, mg resource.Managed, pc *ProviderConfig) (map[string]any, error)
	// ResolveVariables, when set, reads the module variables a resource takes from
	// Secrets and ConfigMaps.
	ResolveVariables VariableResolver
	// WatchedObjects, when set, names the objects in its namespace a resource reads
	// ("Secret/name", "ConfigMap/name": its variables, its module source and the source's
	// credentials; "<provider kind>/name": providers it uses besides its providerRef), so
	// that a change to one reaches it at once.
	WatchedObjects func(mg resource.Managed) []string
	// RecordLock, when set, keeps the dependency lock a resource ran with where its
	// module's other workspaces start from (its class's status), if none is kept there yet.
	RecordLock func(ctx context.Context, c client.Client, mg resource.Managed, lock []byte) error
	// ClassLock, when set, is the dependency lock RecordLock kept for mg's class, which a
	// resource that never ran starts from when its module ships none; nil when none is kept.
	ClassLock func(ctx context.Context, c client.Client, mg resource.Managed) ([]byte, error)
	// OfferUpgrade offers mg's class a lock with newer provider versions than mg runs,
	// which the class's next revision carries (nil: plans do not look for them).
	OfferUpgrade func(ctx context.Context, c client.Client, mg resource.Managed, lock []byte) error
	// ClassModule, when set, reads the module a class's resources run (for the class's
	// revisions); unset, it is the bundled module.
	ClassModule func(ctx context.Context, c client.Client, class client.Object) (*module.Module, error)
	// ProviderConnectionKeysFor, when set, names per resource the keys of its Provider's
	// connection details it hands out, instead of ProviderConnectionKeys (a Module's
	// connection entries with a literal value or a value from a ProviderConfig).
	ProviderConnectionKeysFor func(mg resource.Managed) []string
}

// ProviderConnection is what the kind takes from its Provider's connection details for
// mg: the ProviderConnectionKeys (or ProviderConnectionKeysFor) the Provider offers,
// nothing else.
func (k *TerraformKind) ProviderConnection(mg resource.Managed, pc *ProviderConfig) map[string][]byte {
	out := map[string][]byte{}
	if pc == nil {
		return out
	}
	keys := k.ProviderConnectionKeys
	if k.ProviderConnectionKeysFor != nil {
		keys = k.ProviderConnectionKeysFor(mg)
	}
	for _, key := range keys {
		if v := pc.Connection[key]; len(v) > 0 {
			out[key] = v
		}
	}
	return out
}

// Configurator fills a new managed resource from a claim's portable fields and a
// class's specTemplate.forProvider. Generic fields (names, references, reclaim policy)
// are set by the claim reconciler. A claim the class cannot satisfy is a *resource.UserError.
// A nil Configurator in ClaimKind.Configurators means the managed kind can be bound
// statically but not provisioned.
type Configurator func(req Request, mg resource.Managed) error

// ClaimKind registers one claim kind.
type ClaimKind struct {
	// GVK of the claim kind.
	GVK schema.GroupVersionKind
	// New returns an empty claim; AddClaim derives it from the scheme.
	New func() resource.Claim
	// NewList returns an empty list of the kind (<Kind>List); AddClaim derives it from the scheme.
	NewList func() client.ObjectList
	// ClassGVK is the portable class kind.
	ClassGVK schema.GroupVersionKind
	// NewClass returns an empty portable class; AddClaim derives it from the scheme.
	NewClass func() resource.PortableClass
	// NewClassList returns an empty list of portable classes; AddClaim derives it from the scheme.
	NewClassList func() client.ObjectList
	// Configurators maps each managed kind that can satisfy this claim kind to the
	// configurator that makes one; a kind mapped to nil is bound statically only. The
	// registry adds every managed kind's Meets.
	Configurators map[schema.GroupVersionKind]Configurator
	// Defined kinds come from a ClaimDefinition at run time: they have no Go type in the
	// scheme, and New and NewClass return dynclaim objects, read and written as unstructured.
	Defined bool
}

// Registry holds every registered kind. Managed kinds are added before the controllers
// start; claim kinds may also be added later (AddClaim is safe to call concurrently).
type Registry struct {
	mu      sync.RWMutex
	scheme  *runtime.Scheme
	managed map[schema.GroupVersionKind]*ManagedKind
	byClass map[schema.GroupVersionKind]*ManagedKind
	claims  map[schema.GroupVersionKind]*ClaimKind
	// meets holds every managed kind's Meets by claim kind, for claim kinds added later.
	meets map[schema.GroupVersionKind]map[schema.GroupVersionKind]Configurator
}

// New returns an empty registry whose kinds are known to scheme.
func New(scheme *runtime.Scheme) *Registry {
	return &Registry{
		scheme:  scheme,
		managed: map[schema.GroupVersionKind]*ManagedKind{},
		byClass: map[schema.GroupVersionKind]*ManagedKind{},
		claims:  map[schema.GroupVersionKind]*ClaimKind{},
		meets:   map[schema.GroupVersionKind]map[schema.GroupVersionKind]Configurator{},
	}
}

// Scheme is the scheme every registered kind belongs to.
func (r *Registry) Scheme() *runtime.Scheme { return r.scheme }

// AddManaged registers a managed kind; one without ClassGVK is bound statically only.
// Constructors left nil are derived from the scheme; it panics when a kind's types are
// not in the scheme or lack the methods the reconcilers need, a mistake no test misses.
func (r *Registry) AddManaged(k ManagedKind) {
	if k.New == nil {
		k.New = constructor[resource.Managed](r.scheme, k.GVK)
	}
	if k.NewList == nil {
		k.NewList = constructor[client.ObjectList](r.scheme, k.GVK.GroupVersion().WithKind(k.GVK.Kind+"List"))
	}
	if k.NewClass == nil && !k.ClassGVK.Empty() {
		k.NewClass = constructor[resource.NonPortableClass](r.scheme, k.ClassGVK)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.managed[k.GVK] = &k
	if !k.ClassGVK.Empty() {
		r.byClass[k.ClassGVK] = &k
	}
	for claim, configure := range k.Meets {
		if r.meets[claim] == nil {
			r.meets[claim] = map[schema.GroupVersionKind]Configurator{}
		}
		r.meets[claim][k.GVK] = configure
		if ck, ok := r.claims[claim]; ok {
			ck.Configurators[k.GVK] = configure
		}
	}
}

// AddClaim registers a claim kind, deriving constructors left nil from the scheme as
// AddManaged does; the managed kinds that meet it (ManagedKind.Meets) join its Configurators.
func (r *Registry) AddClaim(k ClaimKind) {
	if k.New == nil {
		k.New = constructor[resource.Claim](r.scheme, k.GVK)
	}
	if k.NewList == nil {
		k.NewList = constructor[client.ObjectList](r.scheme, k.GVK.GroupVersion().WithKind(k.GVK.Kind+"List"))
	}
	if k.NewClass == nil {
		k.NewClass = constructor[resource.PortableClass](r.scheme, k.ClassGVK)
	}
	if k.NewClassList == nil {
		k.NewClassList = constructor[client.ObjectList](r.scheme, k.ClassGVK.GroupVersion().WithKind(k.ClassGVK.Kind+"List"))
	}
	k.Configurators = maps.Clone(k.Configurators)
	if k.Configurators == nil {
		k.Configurators = map[schema.GroupVersionKind]Configurator{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	maps.Copy(k.Configurators, r.meets[k.GVK])
	r.claims[k.GVK] = &k
}

// Claim returns the registered claim kind gvk.
func (r *Registry) Claim(gvk schema.GroupVersionKind) (*ClaimKind, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	k, ok := r.claims[gvk]
	return k, ok
}

// constructor returns a function making empty objects of gvk's Go type, which must be
// in the scheme and implement T.
func constructor[T runtime.Object](s *runtime.Scheme, gvk schema.GroupVersionKind) func() T {
	obj, err := s.New(gvk)
	if err != nil {
		panic(fmt.Sprintf("registry: %s is not in the scheme: %v", gvk, err))
	}
	if _, ok := obj.(T); !ok {
		panic(fmt.Sprintf("registry: %s (%T) lacks methods of %s", gvk, obj, reflect.TypeFor[T]()))
	}
	return func() T {
		obj, _ := s.New(gvk)
		return obj.(T)
	}
}

// TerraformKinds lists the managed kinds that the Terraform engine serves.
func (r *Registry) TerraformKinds() []*ManagedKind {
	var out []*ManagedKind
	for _, k := range r.managed {
		if k.Terraform != nil {
			out = append(out, k)
		}
	}
	return out
}

// ManagedKinds lists every registered managed kind, native ones included.
func (r *Registry) ManagedKinds() []*ManagedKind {
	out := make([]*ManagedKind, 0, len(r.managed))
	for _, k := range r.managed {
		out = append(out, k)
	}
	return out
}

// ClaimKinds lists the registered claim kinds.
func (r *Registry) ClaimKinds() []*ClaimKind {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*ClaimKind, 0, len(r.claims))
	for _, k := range r.claims {
		out = append(out, k)
	}
	return out
}

// Managed returns the managed kind gvk.
func (r *Registry) Managed(gvk schema.GroupVersionKind) (*ManagedKind, bool) {
	k, ok := r.managed[gvk]
	return k, ok
}

// ManagedForClass returns the managed kind that the non-portable class kind gvk makes.
func (r *Registry) ManagedForClass(gvk schema.GroupVersionKind) (*ManagedKind, bool) {
	k, ok := r.byClass[gvk]
	return k, ok
}

// GVKFor returns the group, version and kind of obj from the scheme.
func (r *Registry) GVKFor(obj runtime.Object) (schema.GroupVersionKind, error) {
	gvks, _, err := r.scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return schema.GroupVersionKind{}, fmt.Errorf("kind of %T: %w", obj, err)
	}
	return gvks[0], nil
}
