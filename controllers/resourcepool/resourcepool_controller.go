package resourcepool

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/dynclaim"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/resourcepool"
)

// Options configure the pool reconciler.
type Options struct {
	// UserErrorRetry is how soon a pool stopped by bad input is looked at again.
	UserErrorRetry time.Duration
	// Resync is how often a pool in order is looked at again, besides its members' events.
	Resync time.Duration
}

// Reconciler keeps each ResourcePool's members.
type Reconciler struct {
	client client.Client
	// reader lists members from the API server: a pool never counts from a cache that
	// may not show the members it has just made.
	reader   client.Reader
	reg      *registry.Registry
	recorder resource.Recorder
	opts     Options
	watches  *kindWatches
}

// Setup registers the ResourcePool reconciler; it watches the members of each claim kind
// once a pool of that kind appears.
func Setup(mgr ctrl.Manager, reg *registry.Registry, opts Options) error {
	if opts.UserErrorRetry <= 0 {
		opts.UserErrorRetry = 30 * time.Second
	}
	if opts.Resync <= 0 {
		opts.Resync = time.Minute
	}
	r := &Reconciler{client: dynclaim.Client{Client: mgr.GetClient()}, reader: mgr.GetAPIReader(), reg: reg,
		recorder: resource.NewRecorder(mgr, "terraplane-resourcepool"), opts: opts}
	// Autoscaled pools follow the applications of their namespace.
	c, err := ctrl.NewControllerManagedBy(mgr).Named("resourcepool").For(&scalingv1.ResourcePool{}).
		Watches(&workloadv1.KubernetesApplication{}, handler.EnqueueRequestsFromMapFunc(r.poolsOf)).Build(r)
	if err != nil {
		return fmt.Errorf("set up resourcepool controller: %w", err)
	}
	r.watches = &kindWatches{seen: map[schema.GroupVersionKind]bool{}, add: func(obj client.Object) error {
		return c.Watch(source.Kind(mgr.GetCache(), obj, handler.EnqueueRequestsFromMapFunc(forMember)))
	}}
	return nil
}

// kindWatches starts one watch of members per claim kind, the first time a pool of
// that kind is reconciled.
type kindWatches struct {
	mu   sync.Mutex
	seen map[schema.GroupVersionKind]bool
	add  func(client.Object) error
}

// watch starts the watch of kind's claims, once.
func (w *kindWatches) watch(kind *registry.ClaimKind) error {
	if w == nil {
		return nil // unit tests drive Reconcile alone
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[kind.GVK] {
		return nil
	}
	obj := client.Object(kind.New())
	if d, ok := obj.(dynclaim.Object); ok {
		obj = d.Unstructured() // a defined kind is watched as unstructured, as its claim reconciler does
	}
	if err := w.add(obj); err != nil {
		return fmt.Errorf("watch %s claims: %w", kind.GVK.Kind, err)
	}
	w.seen[kind.GVK] = true
	return nil
}

// forMember maps a claim to the pool it is a member of, and to the pool it was filled
// from: its deletion makes room under that pool's maxSize.
func forMember(_ context.Context, obj client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	if pool := obj.GetLabels()[common.PoolLabel]; pool != "" {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: pool}})
	}
	if f, ok := resourcepool.ParseFill(obj.GetAnnotations()); ok {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: f.Pool}})
	}
	return reqs
}

// Reconcile runs the pool's phases and records what they found.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pool := &scalingv1.ResourcePool{}
	if err := r.client.Get(ctx, req.NamespacedName, pool); err != nil {
		if client.IgnoreNotFound(err) == nil {
			resourcepool.ForgetPool(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !pool.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // its members go with it: they are owned by it
	}
	p := &pass{pool: pool}
	var err error
	for _, phase := range []func(context.Context, *pass) error{r.checkTemplate, r.watchMembers, r.readMembers, r.settle, r.scale} {
		if err = phase(ctx, p); err != nil {
			break
		}
	}
	return r.finish(ctx, p, err)
}
