package classrevision

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

// Keep is how many revisions a class keeps besides those its resources name: the ones
// a resource may be moved back to.
const Keep = 10

// retry is how soon a class whose module could not be read is looked at again.
const retry = time.Minute

// Reconciler keeps the revisions of the classes of one Terraform kind.
type Reconciler struct {
	client  client.Client
	kind    *registry.ManagedKind
	bundled *module.Module
	events  resource.Recorder
	// informers is the manager's cache, from which the fleet is read in place; nil reads
	// it through client.
	informers cache.Informers
	// sizes are the classes' fleets as last counted, for their coalescing windows and
	// the pace of their counts.
	sizes fleetSizes
	// pace holds back reports whose only news is their counts (see tallyEvery).
	pace reportPace
}

// Setup registers a revision controller for the class kind of every Terraform kind in reg.
func Setup(mgr ctrl.Manager, reg *registry.Registry) error {
	for _, kind := range reg.TerraformKinds() {
		if kind.ClassGVK.Empty() || kind.NewClass == nil {
			continue
		}
		r := &Reconciler{client: mgr.GetClient(), kind: kind, events: resource.NewRecorder(mgr, "terraplane-classrevision"),
			informers: mgr.GetCache()}
		if kind.Terraform.ClassModule == nil {
			var err error
			if r.bundled, err = module.Load(kind.Terraform.Modules, kind.Terraform.ModuleDir); err != nil {
				return fmt.Errorf("load module for %s: %w", kind.GVK.Kind, err)
			}
		}
		b := ctrl.NewControllerManagedBy(mgr).
			Named("classrevision-"+kind.ClassGVK.Kind+"."+kind.ClassGVK.Group).
			For(kind.NewClass(), builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				return !onlyReportMoved(e.ObjectOld, e.ObjectNew)
			}})).
			Watches(kind.NewClass(), r.reportMoves()).
			Owns(&terraformv1.ClassRevision{}).
			Watches(kind.New(), r.fleetChanges())
		if !kind.ProviderGVK.Empty() {
			pc, err := revision.NewObject(mgr.GetScheme(), kind.ProviderGVK)
			if err != nil {
				return fmt.Errorf("set up the revisions of %s: %w", kind.ClassGVK.Kind, err)
			}
			b = b.Watches(pc, handler.EnqueueRequestsFromMapFunc(r.classesNaming))
		}
		if err := b.Complete(r); err != nil {
			return fmt.Errorf("set up the revisions of %s: %w", kind.ClassGVK.Kind, err)
		}
	}
	return nil
}

// classOf maps a managed resource to the class it was made from.
func (r *Reconciler) classOf(_ context.Context, obj client.Object) []reconcile.Request {
	mg, ok := obj.(resource.Managed)
	if !ok {
		return nil
	}
	ref := mg.GetManagedSpec().ClassRef
	if ref == nil || ref.Kind != r.kind.ClassGVK.Kind || ref.APIVersion != r.kind.ClassGVK.GroupVersion().String() {
		return nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = mg.GetNamespace()
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: ref.Name}}}
}

// Reconcile makes the class's revision for what it runs now, if there is none, drops the
// revisions no resource needs beyond Keep, reports them with their resources, and moves
// the rollout of the revision to roll out on.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.kind.NewClass()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	class, ok := obj.(revision.Class)
	if !ok || !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	orig := class.DeepCopyObject().(client.Object)
	revs, err := r.revisions(ctx, class)
	if err != nil {
		return ctrl.Result{}, err
	}
	result := ctrl.Result{}
	latest, err := r.ensure(ctx, class, revs)
	switch {
	case err == nil:
		revs = upsert(revs, latest)
		tookUpgrade(class, latest)
	case r.waits(err):
		result.RequeueAfter = retry // the class's own status says why its module cannot be read
	default:
		return ctrl.Result{}, err
	}
	fleet, err := r.fleet(ctx, class)
	if err != nil {
		return ctrl.Result{}, err
	}
	r.sizes.record(req, len(fleet))
	if revs, err = r.prune(ctx, revs, latest, fleet); err != nil {
		return ctrl.Result{}, err
	}
	rc := class.GetClassRevisions()
	rollout := rc.Rollout
	*rc = report(revs, latest, fleet, rc.LatestRevision)
	notes := r.roll(class, rollout, revs, fleet)
	if resource.Unchanged(class, orig) {
		return result, nil
	}
	if wait := r.pace.wait(req, tallyOnly(orig, class), r.sizes.tally(req)); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil // the counts are written once their time comes
	}
	// Guarded: the class's own controller writes its conditions too.
	res, err := resource.Finisher{Client: r.client, Recorder: r.events, Guarded: true}.Finish(ctx, class, orig, resource.Outcome{Requeue: result.RequeueAfter}, notes)
	if err == nil {
		r.pace.wrote(req)
	}
	return res, err
}

// roll moves the rollout of the class's target revision on (see step), records it in the
// class's status with the RolloutPaused condition, and returns the events to send.
func (r *Reconciler) roll(class revision.Class, prev *common.RolloutStatus, revs []terraformv1.ClassRevision, fleet []member) []resource.Note {
	rc := class.GetClassRevisions()
	target := rolloutTarget(class, rc.LatestRevision, revs)
	if target == "" {
		return nil
	}
	var notes []resource.Note
	rc.Rollout, notes = step(prev, rolloutInput{target: target, policy: class.GetSpecTemplate().Rollout,
		resumed: class.GetAnnotations()[common.RolloutResumedAtAnnotation], now: metav1.Now()}, fleet)
	status, reason, msg := pausedCondition(rc.Rollout)
	resource.SetCondition(class.GetClassConditions(), class.GetGeneration(), common.TypeRolloutPaused, status, reason, msg)
	return notes
}

// rolloutTarget is the revision to roll out: the class's latest, or, while the latest is
// the revision an undo rolled back from, the one it rolled back to.
func rolloutTarget(class client.Object, latest string, revs []terraformv1.ClassRevision) string {
	from, to := class.GetAnnotations()[common.RolloutUndoFromAnnotation], class.GetAnnotations()[common.RolloutUndoToAnnotation]
	if from != "" && from == latest && slices.ContainsFunc(revs, func(r terraformv1.ClassRevision) bool { return r.Name == to }) {
		return to
	}
	return latest
}

// waits reports whether err is the class's module not being readable (yet), which the
// class reports itself: it is retried on a timer, not with backoff.
func (r *Reconciler) waits(err error) bool {
	_, user := resource.AsUserError(err)
	return user || err == errNotReady
}

// errNotReady: a ModuleClass is not Ready, so its module is not known to be usable.
var errNotReady = fmt.Errorf("the class is not Ready")
