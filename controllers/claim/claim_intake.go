package claim

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/dynclaim"
	"terraplane.io/terraplane/internal/intake"
	"terraplane.io/terraplane/internal/resource"
)

// ReasonQueued: the claim waits its turn for a new resource; claims made before it in
// its namespace go first.
const ReasonQueued = common.ReasonQueued

// queuedRetry is how soon a queued claim is looked at again should no place free up for
// it: the gate wakes it when its turn comes, so this is only a safety net, kept long
// because each of thousands of claims queued in a burst would be looked at that often.
const queuedRetry = 5 * time.Minute

// maxQueuedRetry caps how long a claim that has waited long goes without a look.
const maxQueuedRetry = 20 * time.Minute

// queuedRetryAfter is how soon a claim made at made and still queued at now is looked at
// again should no place free up for it: as long as it has waited, at least queuedRetry
// and at most maxQueuedRetry. The claims of a burst of ten thousand, which waits for as
// long as their resources take to apply, are then each looked at a few times, rather
// than once every queuedRetry for as long as the burst lasts.
func queuedRetryAfter(made, now time.Time) time.Duration {
	if made.IsZero() {
		return queuedRetry
	}
	return min(max(queuedRetry, now.Sub(made)), maxQueuedRetry)
}

// waker queues claims again when the intake gate says their turn may have come.
type waker struct {
	q atomic.Pointer[workqueue.TypedRateLimitingInterface[reconcile.Request]]
}

// source is the controller's handle on its own queue.
func (w *waker) source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		w.q.Store(&q)
		return nil
	})
}

// wake returns the function that queues the claim key again.
func (w *waker) wake(key types.NamespacedName) func() {
	return func() {
		if q := w.q.Load(); q != nil {
			(*q).Add(reconcile.Request{NamespacedName: key})
		}
	}
}

// admit takes claim in through the intake gate before its resource is made; a claim
// that must wait its turn gets a Waiting error that says so. A claim that begins a burst
// in its namespace first puts in line the claims of its kind that wait there already.
func (r *Reconciler) admit(ctx context.Context, claim resource.Claim) error {
	key := client.ObjectKeyFromObject(claim)
	if r.opts.Intake.Begins(key.Namespace) {
		r.opts.Intake.LineUp(key, r.waitingIn(ctx, key.Namespace))
	}
	if r.opts.Intake.Admit(key, claim.GetCreationTimestamp().Time, r.waker.wake(key)) {
		return nil
	}
	return r.queuedError(claim)
}

// unboundIndex indexes the claims that have no resource yet and are not being deleted,
// so that those waiting in a namespace are found without reading the bound ones.
const unboundIndex = "terraplane.io/unbound"

// unboundKeys is obj's unboundIndex key: "true" for a claim with no resource that is
// not being deleted; obj is a claim, or an unstructured claim of a defined kind.
func unboundKeys(obj client.Object) []string {
	if !obj.GetDeletionTimestamp().IsZero() || handedOut(obj) {
		return nil
	}
	switch o := obj.(type) {
	case resource.Claim:
		if o.GetClaimSpec().ResourceRef != nil {
			return nil
		}
	case *unstructured.Unstructured:
		if ref, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "resourceRef"); ref != nil {
			return nil
		}
	default:
		return nil
	}
	return []string{"true"}
}

// waitingIn is the claims of r's kind in namespace that wait for a new resource, each
// with what wakes it (waitsForResource). Claims whose last reconcile failed for another
// reason are left out: their retries, not the line, bring them back, and one that failed
// making its resource would begin a burst at each retry that woke the rest again.
func (r *Reconciler) waitingIn(ctx context.Context, namespace string) []intake.Claimant {
	list := r.kind.NewList()
	if err := r.cache.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{unboundIndex: "true"}); err != nil {
		log.FromContext(ctx).Error(err, "list the claims waiting for a new resource; they go in the order they are looked at", "namespace", namespace)
		return nil
	}
	var waiting []intake.Claimant
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		claim, ok := asClaim(o)
		if ok && waitsForResource(claim) {
			key := client.ObjectKeyFromObject(claim)
			waiting = append(waiting, intake.Claimant{Key: key, Made: claim.GetCreationTimestamp().Time, Wake: r.waker.wake(key)})
		}
		return nil
	})
	return waiting
}

// waitsForResource says whether claim, not bound yet, waits for a new resource: no
// reconcile has said anything of it yet, it waits (its turn, its class's first revision:
// Synced=True says so), or its class is missing or not Ready.
func waitsForResource(claim resource.Claim) bool {
	synced := meta.FindStatusCondition(claim.GetClaimStatus().Conditions, common.TypeSynced)
	return synced == nil || synced.Status == metav1.ConditionTrue ||
		synced.Reason == ReasonClassNotFound || synced.Reason == common.ReasonClassNotReady
}

// asClaim is o, an item of a list of claims, as a Claim.
func asClaim(o runtime.Object) (resource.Claim, bool) {
	switch c := o.(type) {
	case resource.Claim:
		return c, true
	case *unstructured.Unstructured:
		claim, err := dynclaim.ClaimFrom(c)
		return claim, err == nil
	}
	return nil, false
}

// stillQueued answers a claim already waiting its turn, whose turn has not come, before
// its class is read and its resource built: a claim queued behind thousands is looked at
// again a few times before its turn. Its class is checked when its turn comes.
func (r *Reconciler) stillQueued(claim resource.Claim) error {
	if !r.opts.Intake.Waits(client.ObjectKeyFromObject(claim)) {
		return nil
	}
	return r.queuedError(claim)
}

// queuedError says that claim waits its turn for a new resource, and why.
func (r *Reconciler) queuedError(claim resource.Claim) error {
	return resource.Waitf(ReasonQueued, "waiting its turn for a new resource: at most %d new resources wait for their first apply at once in namespace %s, and claims made earlier go first",
		r.opts.Intake.Limit(), claim.GetNamespace())
}

// settle gives back what the intake gate holds for the claim key once the reconcile
// shows it no longer needs it: its resource's first apply has an outcome (Ready, or
// failing), or the claim failed before a resource was made. A claim just provisioned,
// one still queued, and one whose resource is still being made keep theirs.
func (r *Reconciler) settle(key types.NamespacedName, mg resource.Managed, err error) {
	switch w, waiting := resource.AsWaiting(err); {
	case mg == nil && err == nil, waiting && w.Reason == ReasonQueued, mg != nil && !firstOutcome(mg):
		return
	}
	r.opts.Intake.Done(key)
}

// firstOutcome says whether mg's first apply has an outcome, or mg waits on something
// other than terraform: its create has settled (createSettled), or Synced says anything
// but success (waiting for an input such as another claim's connection details, which
// may itself wait its turn here). A resource whose status says only that its create is
// under way (the progress report of a long first apply: Ready=False Creating,
// Synced=True) has none yet.
func firstOutcome(mg resource.Managed) bool {
	conds := mg.GetManagedStatus().Conditions
	if synced := meta.FindStatusCondition(conds, common.TypeSynced); synced != nil &&
		(synced.Status != metav1.ConditionTrue || synced.Reason != common.ReasonReconcileSuccess) {
		return true
	}
	return createSettled(conds)
}

// createSettled says whether a resource's conditions show its create settled: Ready
// says anything but Creating, or Synced=False (failing, refused, or held for an
// approval: a failure says more than the create under way).
func createSettled(conds []metav1.Condition) bool {
	ready, synced := meta.FindStatusCondition(conds, common.TypeReady), meta.FindStatusCondition(conds, common.TypeSynced)
	return ready != nil && (ready.Status == metav1.ConditionTrue || ready.Reason != common.ReasonCreating) ||
		synced != nil && synced.Status == metav1.ConditionFalse
}

// quietWait is how much longer a claim queued by the gate keeps its status unwritten: a
// claim whose turn comes within statusCoalesce of its creation never shows Queued.
func quietWait(claim resource.Claim, err error) time.Duration {
	w, waiting := resource.AsWaiting(err)
	if !waiting || w.Reason != ReasonQueued || meta.FindStatusCondition(claim.GetClaimStatus().Conditions, common.TypeSynced) != nil {
		return 0
	}
	return max(0, statusCoalesce-time.Since(claim.GetCreationTimestamp().Time))
}
