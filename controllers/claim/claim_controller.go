package claim

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"terraplane.io/terraplane/internal/dynclaim"
	"terraplane.io/terraplane/internal/intake"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

// Options configure the claim reconcilers.
type Options struct {
	// UserErrorRetry is how soon a claim stopped by a user error is looked at again.
	UserErrorRetry time.Duration
	// MaxConcurrentReconciles per kind.
	MaxConcurrentReconciles int
	// Placement places claims that bind on first consumer; nil refuses such claims.
	Placement Placement
	// Intake paces the resources made for new claims; nil makes each at once.
	Intake *intake.Gate
}

// Reconciler reconciles one claim kind.
type Reconciler struct {
	client client.Client
	// reader reads from the API server, for what the cache does not show.
	reader client.Reader
	// cache reads the informers' objects by index, a defined kind's unstructured claims
	// and classes among them (client reads those from the cache too, through dynclaim).
	cache    client.Reader
	reg      *registry.Registry
	kind     *registry.ClaimKind
	opts     Options
	recorder resource.Recorder
	pending  pendingRefs
	waker    waker
	// overlays keeps each class at the revision its claims read last.
	overlays *revision.Overlays
}

// Server starts claim reconcilers: one per compiled-in kind at setup, and one per kind
// a ClaimDefinition adds at run time.
type Server struct {
	mgr     ctrl.Manager
	reg     *registry.Registry
	opts    Options
	mu      sync.Mutex
	serving map[schema.GroupVersionKind]bool
}

// Setup registers a claim reconciler for every claim kind in reg and returns the Server
// that adds the kinds defined later.
func Setup(mgr ctrl.Manager, reg *registry.Registry, opts Options) (*Server, error) {
	if opts.UserErrorRetry <= 0 {
		opts.UserErrorRetry = 30 * time.Second
	}
	s := &Server{mgr: mgr, reg: reg, opts: opts, serving: map[schema.GroupVersionKind]bool{}}
	for _, kind := range reg.ClaimKinds() {
		if err := s.Serve(kind); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Serve starts the reconciler of one registered claim kind, once; a kind served already
// is left as it is.
func (s *Server) Serve(kind *registry.ClaimKind) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serving[kind.GVK] {
		return nil
	}
	r := &Reconciler{client: dynclaim.Client{Client: s.mgr.GetClient(), Cache: s.mgr.GetCache()}, reader: s.mgr.GetAPIReader(), cache: s.mgr.GetCache(), reg: s.reg, kind: kind, opts: s.opts,
		recorder: resource.NewRecorder(s.mgr, "terraplane-claim"), overlays: &revision.Overlays{}}
	name := kind.GVK.Kind
	if kind.Defined {
		name = kind.GVK.Kind + "." + kind.GVK.Group
	}
	if err := s.mgr.GetFieldIndexer().IndexField(context.Background(), watched(kind.New()), unboundIndex, unboundKeys); err != nil {
		return fmt.Errorf("index %s claims with no resource: %w", kind.GVK.Kind, err)
	}
	b := ctrl.NewControllerManagedBy(s.mgr).
		Named(name).
		For(watched(kind.New())).
		Watches(watched(kind.NewClass()), handler.EnqueueRequestsFromMapFunc(r.forClass)).
		WatchesRawSource(r.waker.source()).
		WithOptions(controller.Options{MaxConcurrentReconciles: s.opts.MaxConcurrentReconciles})
	if s.opts.Placement != nil {
		consumer, placed := s.opts.Placement.Consumers()
		b = b.Watches(consumer, handler.EnqueueRequestsFromMapFunc(r.forConsumer), builder.WithPredicates(placed))
	}
	for gvk := range kind.Configurators {
		mk, ok := s.reg.Managed(gvk)
		if !ok {
			return fmt.Errorf("claim %s: managed kind %s is not registered", kind.GVK.Kind, gvk)
		}
		b = b.Watches(mk.New(), handler.EnqueueRequestsFromMapFunc(r.forManagedOf(mk)))
		if mk.NewClass != nil {
			b = b.Watches(mk.NewClass(), handler.EnqueueRequestsFromMapFunc(r.forClassOf(mk)), builder.WithPredicates(classSteers))
		}
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("set up %s controller: %w", kind.GVK.Kind, err)
	}
	s.serving[kind.GVK] = true
	return nil
}

// watched is what a watch of obj's kind receives: obj itself, or for a defined kind an
// unstructured object of that kind.
func watched(obj client.Object) client.Object {
	if d, ok := obj.(dynclaim.Object); ok {
		return d.Unstructured()
	}
	return obj
}

// Reconcile binds one claim and keeps it in step with its managed resource.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	claim := r.kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, claim); err != nil {
		if apierrors.IsNotFound(err) {
			r.pending.forget(req.NamespacedName)
			r.opts.Intake.Done(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if handedOut(claim) && claim.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil // a pool member whose resource is another claim's now: it waits to be deleted
	}
	if r.pending.stale(claim) {
		return ctrl.Result{}, nil // the cache lags our resourceRef update, whose event queues the claim again
	}
	if !claim.GetDeletionTimestamp().IsZero() {
		r.opts.Intake.Done(req.NamespacedName)
		return r.finish(ctx, claim, nil, r.delete(ctx, claim))
	}
	if claim.GetClaimSpec().ResourceRef != nil || claim.GetClaimSpec().ClassRef == nil {
		// Dynamic provisioning writes the finalizer with resourceRef, in one update.
		if err := resource.AddFinalizer(ctx, r.client, claim); err != nil {
			return ctrl.Result{}, err
		}
	}
	mg, err := r.bind(ctx, claim)
	r.settle(req.NamespacedName, mg, err)
	if mg == nil && err == nil { // provisioned: the resourceRef update queues the claim again
		r.pending.add(claim)
		return ctrl.Result{}, nil
	}
	if wait := quietWait(claim, err); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil // its turn (or this timer) brings the claim back
	}
	if err == nil {
		if wait := firstStatusWait(claim, mg); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil // the resource's first status (or this timer) brings the claim back
		}
		err = r.propagate(ctx, claim, mg)
	}
	return r.finish(ctx, claim, mg, err)
}

// forClass maps a portable class to the claims in its namespace that are not bound yet
// and to those that name it, so that a class deleted (or back again) shows on them at once.
func (r *Reconciler) forClass(ctx context.Context, class client.Object) []reconcile.Request {
	return r.claimsIn(ctx, class.GetNamespace(), func(c resource.Claim) bool {
		spec := c.GetClaimSpec()
		return spec.ResourceRef == nil || (spec.ClassRef != nil && spec.ClassRef.Name == class.GetName())
	})
}

// forManaged maps a managed resource to its claim.
func (r *Reconciler) forManaged(_ context.Context, obj client.Object) []reconcile.Request {
	mg, ok := obj.(resource.Managed)
	if !ok {
		return nil
	}
	ref := mg.GetManagedSpec().ClaimRef
	if ref == nil || ref.Kind != r.kind.GVK.Kind || ref.APIVersion != "" && ref.APIVersion != r.kind.GVK.GroupVersion().String() {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}}}
}

// classSteers passes the updates of a non-portable class that change what its claims act
// on (revision.SteeringChanged), and every update of a class that keeps no revisions. The
// revision counts a class reports change with each of its resources; each would queue
// every claim of the class again.
var classSteers = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	before, okBefore := e.ObjectOld.(revision.Class)
	after, okAfter := e.ObjectNew.(revision.Class)
	return !okBefore || !okAfter || revision.SteeringChanged(before, after)
}}

// forClassOf maps a non-portable class to the claims bound to resources made from it, so
// that class edits (a new module tag, say) roll forward to them, and to unbound claims,
// which may have been waiting for the class to become Ready.
func (r *Reconciler) forClassOf(mk *registry.ManagedKind) handler.MapFunc {
	return func(ctx context.Context, class client.Object) []reconcile.Request {
		list := mk.NewList()
		if err := r.client.List(ctx, list, client.InNamespace(class.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil { // read only
			return nil
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil
		}
		// Claims still waiting for a class to become usable, anywhere.
		reqs := r.claimsIn(ctx, "", func(c resource.Claim) bool { return c.GetClaimSpec().ResourceRef == nil })
		for _, it := range items {
			mg, ok := it.(resource.Managed)
			if !ok {
				continue
			}
			spec := mg.GetManagedSpec()
			if spec.ClassRef != nil && spec.ClassRef.Name == class.GetName() && spec.ClassRef.Kind == mk.ClassGVK.Kind {
				reqs = append(reqs, r.forManaged(ctx, mg)...)
			}
		}
		return reqs
	}
}
