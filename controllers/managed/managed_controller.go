package managed

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/shard"
)

// Kind is one managed kind as the reconciler serves it.
type Kind struct {
	// Name names the kind's controller.
	Name string
	// New returns an empty resource of the kind.
	New func() resource.Managed
	// NewList returns an empty list of the kind.
	NewList func() client.ObjectList
	// Class is the non-portable class kind that makes the kind's resources, whose
	// writeConnectionSecretsToNamespace a resource's connection Secret may use; zero for a
	// kind bound statically only.
	Class resource.ClassKind
	// Connector reaches the kind's external resources.
	Connector Connector
	// Retries says how soon each outcome of a resource is looked at again; it is called
	// once per outcome.
	Retries func(resource.Managed) resource.Retries
	// KeepsReady makes a failed reconcile leave a resource once Available Ready
	// (Creating until then), as for Terraform kinds: a failed change does not take away
	// what exists. Otherwise a failure is Ready=False with its reason, as for native
	// kinds, whose failed observation means the external resource cannot be vouched for.
	KeepsReady bool
	// SlowApply says an Apply may take minutes (a terraform run): one of a new generation
	// marks the resource Reconciling with its first progress report (see markApplying).
	SlowApply bool
	// Summary shortens an unexpected error for the Synced condition and the error log
	// (Terraform's diagnostics); the full error is logged at V(1). Nil keeps it whole.
	Summary func(error) string
	// Timeout bounds one reconcile (the calls to a target cluster); zero means none.
	Timeout time.Duration
	// Predicates filter the events of the kind's own resources.
	Predicates []predicate.Predicate
	// Watches are the other objects whose events reach the kind's resources.
	Watches []Watch
	// Shards is this replica's share of the resources; nil means all of them, on the
	// elected leader only.
	Shards *shard.Set
	// MaxConcurrentReconciles of the kind's controller.
	MaxConcurrentReconciles int
	// FailureBackoff is the first wait before an unexpected failure is retried, doubled
	// at each failure in a row up to maxFailureBackoff; zero means controller-runtime's.
	FailureBackoff time.Duration
	// Recorder sends the kind's events.
	Recorder resource.Recorder
}

// Watch maps events of other objects to the resources of a kind.
type Watch struct {
	// Object is the kind of object watched.
	Object client.Object
	// Map names the resources an event of Object concerns.
	Map handler.MapFunc
	// Predicates filter Object's events.
	Predicates []predicate.Predicate
	// Metadata watches Object's metadata only: Map needs no more, and the cache then keeps
	// none of its data (Secrets, ConfigMaps).
	Metadata bool
}

// Reconciler reconciles the resources of one managed kind through its Connector.
type Reconciler struct {
	client  client.Client
	kind    Kind
	streaks *resource.Streaks
}

// New returns the reconciler of kind k.
func New(c client.Client, k Kind) *Reconciler {
	return &Reconciler{client: c, kind: k, streaks: &resource.Streaks{}}
}

// Setup registers the controller of kind k: its own resources, k's watches and, when it
// is sharded, the shards this replica takes.
func Setup(mgr ctrl.Manager, k Kind) error {
	r := New(mgr.GetClient(), k)
	b := ctrl.NewControllerManagedBy(mgr).
		Named(k.Name).
		For(k.New(), builder.WithPredicates(k.Predicates...)).
		WithOptions(controller.Options{MaxConcurrentReconciles: k.MaxConcurrentReconciles, NeedLeaderElection: ptr.To(k.Shards == nil),
			RateLimiter: k.rateLimiter()})
	for _, w := range k.Watches {
		opts := []builder.WatchesOption{builder.WithPredicates(w.Predicates...)}
		if w.Metadata {
			opts = append(opts, builder.OnlyMetadata)
		}
		b = b.Watches(w.Object, handler.EnqueueRequestsFromMapFunc(w.Map), opts...)
	}
	if k.Shards != nil {
		b = b.WatchesRawSource(k.Shards.Source(r.listAll))
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("set up %s controller: %w", k.Name, err)
	}
	return nil
}

// maxFailureBackoff caps the wait before an unexpected failure is retried.
const maxFailureBackoff = 10 * time.Minute

// rateLimiter retries a failing resource after FailureBackoff, doubled at each failure
// in a row; nil keeps controller-runtime's.
func (k Kind) rateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	if k.FailureBackoff <= 0 {
		return nil
	}
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](k.FailureBackoff, maxFailureBackoff)
}

// Reconcile brings one managed resource in line with its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mg := r.kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, mg); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx, done, mine := r.kind.Shards.Begin(ctx, mg.GetUID())
	if !mine || resource.Paused(mg) {
		return ctrl.Result{}, nil // another replica's shard holds it, or the user paused it
	}
	defer done()
	if r.kind.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.kind.Timeout)
		defer cancel()
	}
	if !mg.GetDeletionTimestamp().IsZero() {
		return r.finishDelete(ctx, mg, r.delete(ctx, mg))
	}
	if err := resource.AddFinalizer(ctx, r.client, mg); err != nil {
		return ctrl.Result{}, err
	}
	orig := mg.DeepCopyObject().(resource.Managed)
	if _, _, err := resource.CheckConnectionSecretRef(ctx, r.client, mg, r.kind.Class); err != nil {
		return r.finish(ctx, orig, mg, nil, err) // refused before anything runs
	}
	ext, err := r.kind.Connector.Connect(ctx, mg)
	if err != nil {
		return r.finish(ctx, orig, mg, nil, err)
	}
	return r.observeAndApply(ctx, orig, mg, ext)
}

// observeAndApply observes mg's external resource, applies it if it needs it, and
// finishes with the outcome and the record of the run.
func (r *Reconciler) observeAndApply(ctx context.Context, orig, mg resource.Managed, ext External) (ctrl.Result, error) {
	obs, err := ext.Observe(ctx, mg)
	if err == nil && obs.Settled {
		return r.settled(ctx, orig, mg, obs.RequeueAfter)
	}
	mark := err == nil && !obs.UpToDate && r.markDue(mg)
	if p, ok := ext.(Progressing); ok {
		var lost error // the mark lost to a newer status: this run reports no more
		p.Progress(func(ctx context.Context) (err error) {
			if lost != nil {
				return lost
			}
			if mark {
				markApplying(mg)
			}
			orig, err = r.writeProgress(ctx, orig, mg, mark)
			switch {
			case err == nil:
				mark = false
			case mark && apierrors.IsConflict(err):
				lost = err
			}
			return err
		})
	}
	var run *Run
	if err == nil {
		run, err = r.applyAndPublish(ctx, ext, mg, obs)
	}
	if mark {
		return r.finishUnmarked(ctx, orig, mg, run, err)
	}
	return r.finish(ctx, orig, mg, run, err)
}
