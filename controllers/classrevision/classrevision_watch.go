package classrevision

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

// coalesce is how long a class waits after one of its resources changed before it looks
// at its fleet again. A busy fleet (a thousand claims applied at once) then costs the
// class one look, and at most one status write, per window rather than one per change.
const coalesce = time.Second

// maxCoalesce caps the window of a large fleet (see fleetSizes.window).
const maxCoalesce = 30 * time.Second

// fleetSizes remembers how many resources each class had when it last looked at them.
type fleetSizes struct{ m sync.Map }

// record notes that class req has n resources.
func (s *fleetSizes) record(req reconcile.Request, n int) { s.m.Store(req, n) }

// window is how long class req waits after a change before it looks at its fleet again:
// coalesce times the square of its resources in thousands, at least coalesce and at most
// maxCoalesce (1 s at a thousand, 4 s at two thousand, 25 s at five thousand). Each look
// reads the whole fleet, and a fleet moves for as long as it takes to apply, so a window
// that only grew with the fleet would keep the looks per resource flat; each look at a
// large fleet also costs more per resource (its objects no longer fit the processor's
// caches), so the window grows faster than the fleet and the cost per resource falls.
func (s *fleetSizes) window(req reconcile.Request) time.Duration {
	k := time.Duration(min(s.size(req)/1000, 1000)) // past the cap already; k*k stays far from overflow
	return min(max(coalesce, k*k*coalesce), maxCoalesce)
}

// tally is how often at most class req writes a report whose only news is its counts:
// tallyEvery per thousand resources, at least tallyEvery and at most maxTally. A fleet
// moves at the pace of its terraform runs, not of its size, so a fixed pace would cost
// each claim of any fleet the same share of a write, 0.01 on two cores; scaled, a fleet
// of ten thousand pays a sixth of that, and its counts are never more than two minutes
// old.
func (s *fleetSizes) tally(req reconcile.Request) time.Duration {
	return s.perThousand(req, tallyEvery, maxTally)
}

// perThousand is step for each thousand resources class req had when last counted, at
// least step and at most ceiling.
func (s *fleetSizes) perThousand(req reconcile.Request, step, ceiling time.Duration) time.Duration {
	return min(max(step, time.Duration(s.size(req)/1000)*step), ceiling)
}

// size is how many resources class req had when last counted; 0 before its first look.
func (s *fleetSizes) size(req reconcile.Request) int {
	n, _ := s.m.Load(req)
	size, _ := n.(int)
	return size
}

// queue is the work queue of the revision controllers.
type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// fleetChanges queues the class of a resource, one window later (see fleetSizes.window), when the resource is made
// or deleted, or changes in a way its class reports or rolls out on (see fleetMoved). The
// many other status writes of a resource (a drift check, a plan) queue nothing.
func (r *Reconciler) fleetChanges() handler.EventHandler {
	add := func(ctx context.Context, obj client.Object, q queue) {
		for _, req := range r.classOf(ctx, obj) {
			q.AddAfter(req, r.sizes.window(req)) // a class already waiting keeps its earlier time
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) { add(ctx, e.Object, q) },
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) { add(ctx, e.Object, q) },
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			if fleetMoved(e.ObjectOld, e.ObjectNew) {
				add(ctx, e.ObjectOld, q) // its class before, if that changed
				add(ctx, e.ObjectNew, q)
			}
		},
	}
}

// reportMoves queues a class, one window later, when the only change of its update is
// the report this controller writes (its revisions, their resources and the rollout).
// Queued at once, each report written would queue the class again while its fleet moves,
// and it would write the report at the API server's pace rather than once per window.
func (r *Reconciler) reportMoves() handler.EventHandler {
	return handler.Funcs{UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
		if onlyReportMoved(e.ObjectOld, e.ObjectNew) {
			req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.ObjectNew)}
			q.AddAfter(req, r.sizes.window(req))
		}
	}}
}

// onlyReportMoved reports whether a class's update changed nothing but its report
// (status revisions and rollout) and the bookkeeping of any write.
func onlyReportMoved(before, after client.Object) bool {
	old, okOld := before.(revision.Class)
	cur, okNew := after.(revision.Class)
	if !okOld || !okNew {
		return false
	}
	a, b := old.DeepCopyObject().(revision.Class), cur.DeepCopyObject().(revision.Class)
	*a.GetClassRevisions() = common.ClassRevisions{}
	*b.GetClassRevisions() = common.ClassRevisions{}
	for _, o := range []revision.Class{a, b} {
		o.SetResourceVersion("")
		o.SetManagedFields(nil)
	}
	return equality.Semantic.DeepEqual(a, b)
}

// fleetMoved reports whether a resource's update matters to its class's revisions: another
// class, revision or revision policy, Ready and Synced or not, failed or not.
func fleetMoved(before, after client.Object) bool {
	old, okOld := before.(resource.Managed)
	cur, okNew := after.(resource.Managed)
	if !okOld || !okNew {
		return true
	}
	return memberOf(old) != memberOf(cur) || !sameClass(old, cur)
}

// sameClass reports whether a and b name the same class.
func sameClass(a, b resource.Managed) bool {
	ra, rb := a.GetManagedSpec().ClassRef, b.GetManagedSpec().ClassRef
	return ra == nil && rb == nil || ra != nil && rb != nil && *ra == *rb
}

// classesNaming maps a ProviderConfig to the classes of its namespace whose template
// names it: its change makes each of them a new revision.
func (r *Reconciler) classesNaming(ctx context.Context, pc client.Object) []reconcile.Request {
	list, err := r.client.Scheme().New(r.kind.ClassGVK.GroupVersion().WithKind(r.kind.ClassGVK.Kind + "List"))
	if err != nil {
		return nil
	}
	classes, ok := list.(client.ObjectList)
	if !ok || r.client.List(ctx, classes, client.InNamespace(pc.GetNamespace())) != nil {
		return nil
	}
	items, err := meta.ExtractList(classes)
	if err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, it := range items {
		class, ok := it.(client.Object)
		if !ok {
			continue
		}
		tmpl, err := revision.Template(class)
		if err == nil && slices.Contains(revision.ProviderConfigNames(tmpl), pc.GetName()) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(class)})
		}
	}
	return out
}
