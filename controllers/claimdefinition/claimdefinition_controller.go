package claimdefinition

import (
	"context"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// KindServer starts the claim reconciler of a registered claim kind (claim.Server).
type KindServer interface {
	// Serve starts the reconciler of kind, once.
	Serve(kind *registry.ClaimKind) error
}

// Options configure the ClaimDefinition controller.
type Options struct {
	// UserErrorRetry is how soon a definition stopped by a problem (a breaking change,
	// claims that block its deletion) is looked at again.
	UserErrorRetry time.Duration
	// DefaultNamespace is where fromModule looks for a ModuleClass that names no namespace.
	DefaultNamespace string
	// Discovery lists the kinds the API server serves, to warn of names another group
	// serves too; Setup makes one from the manager's configuration, nil checks nothing.
	Discovery Discovery
}

// Discovery is the part of the API server's discovery the name check reads.
type Discovery interface {
	// ServerGroupsAndResources lists the served groups and their resources; with an
	// error, what it could read.
	ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error)
}

// Reconciler defines the kinds of ClaimDefinitions: their CRDs and ClusterRoles, and,
// with a KindServer, serves them (the stack manager defines, the controller serves).
type Reconciler struct {
	client client.Client
	loader *modsource.Loader
	reg    *registry.Registry
	server KindServer
	opts   Options
	events resource.Recorder
}

// Setup registers the ClaimDefinition controller that both defines kinds and serves them,
// in one process. It watches the CRDs it generates (to see them Established) and
// ModuleClasses (a new module version regenerates the schema).
func Setup(mgr ctrl.Manager, loader *modsource.Loader, reg *registry.Registry, server KindServer, opts Options) error {
	return setup(mgr, loader, reg, server, opts)
}

// SetupDefiner registers the ClaimDefinition controller of the stack manager: it writes
// each definition's CRDs and ClusterRoles and its status, the condition Established
// included, and serves nothing; the controller's SetupServer does.
func SetupDefiner(mgr ctrl.Manager, loader *modsource.Loader, reg *registry.Registry, opts Options) error {
	return setup(mgr, loader, reg, nil, opts)
}

func setup(mgr ctrl.Manager, loader *modsource.Loader, reg *registry.Registry, server KindServer, opts Options) error {
	if opts.UserErrorRetry <= 0 {
		opts.UserErrorRetry = 30 * time.Second
	}
	if opts.DefaultNamespace == "" {
		opts.DefaultNamespace = "terraplane-system"
	}
	if opts.Discovery == nil {
		d, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
		if err != nil {
			return fmt.Errorf("discovery client: %w", err)
		}
		opts.Discovery = d
	}
	r := &Reconciler{client: mgr.GetClient(), loader: loader, reg: reg, server: server, opts: opts,
		events: resource.NewRecorder(mgr, "terraplane-claimdefinition")}
	return ctrl.NewControllerManagedBy(mgr).
		For(&apiextv1.ClaimDefinition{}).
		Owns(&apiextensionsv1.CustomResourceDefinition{}).
		Watches(&terraformv1.ModuleClass{}, handler.EnqueueRequestsFromMapFunc(r.forModuleClass)).
		Complete(r)
}

// Reconcile generates, checks and applies a definition's CRDs and serves its kind.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	def := &apiextv1.ClaimDefinition{}
	if err := r.client.Get(ctx, req.NamespacedName, def); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	c := &run{def: def, orig: def.DeepCopy()}
	if !def.DeletionTimestamp.IsZero() {
		c.err = r.delete(ctx, c)
		return r.finish(ctx, c)
	}
	if err := resource.AddFinalizer(ctx, r.client, def); err != nil {
		return ctrl.Result{}, err
	}
	c.orig = def.DeepCopy()
	for _, phase := range []func(context.Context, *run) error{r.schema, r.checkNames, r.checkBreaking, r.apply, r.established, r.roles, r.register} {
		if c.err = phase(ctx, c); c.err != nil {
			break
		}
	}
	if u, ok := resource.AsUserError(c.err); ok && u.Reason == apiextv1.ReasonBreakingChange {
		r.keepServing(ctx, c) // the CRD as it was still serves its claims
	}
	return r.finish(ctx, c)
}

// keepServing serves the kind with the CRDs as they are, after a change was refused.
func (r *Reconciler) keepServing(ctx context.Context, c *run) {
	if r.established(ctx, c) == nil && r.roles(ctx, c) == nil {
		if err := r.register(ctx, c); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "serve the kind with its previous schema")
		}
	}
}

// forModuleClass maps a ModuleClass to the definitions generated from it.
func (r *Reconciler) forModuleClass(ctx context.Context, obj client.Object) []reconcile.Request {
	list := &apiextv1.ClaimDefinitionList{}
	if err := r.client.List(ctx, list); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, d := range list.Items {
		if from := d.Spec.FromModule; from != nil && from.ModuleClassRef.Name == obj.GetName() && r.namespaceOf(from) == obj.GetNamespace() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&d)})
		}
	}
	return reqs
}

func (r *Reconciler) namespaceOf(from *apiextv1.FromModule) string {
	if from.ModuleClassRef.Namespace != "" {
		return from.ModuleClassRef.Namespace
	}
	return r.opts.DefaultNamespace
}
