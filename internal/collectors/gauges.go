package collectors

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/cacheread"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// gauge describes one count of objects at scrape time, per kind and API group, and
// which objects it counts.
type gauge struct {
	desc  *prometheus.Desc
	count func(v view) bool
}

// view is what a gauge reads of one object at a scrape.
type view struct {
	obj   client.Object
	conds []metav1.Condition
	// now is the scrape's time; driftInterval the controller's, for a resource that
	// sets none of its own.
	now           time.Time
	driftInterval time.Duration
}

func newGauge(name, help string, count func(view) bool) gauge {
	return gauge{desc: prometheus.NewDesc(name, help, []string{"kind", "group"}, nil), count: count}
}

// onConditions is a gauge rule that reads the object's conditions only.
func onConditions(count func([]metav1.Condition) bool) func(view) bool {
	return func(v view) bool { return count(v.conds) }
}

func always(view) bool { return true }

func isTrue(typ string) func(view) bool {
	return onConditions(func(conds []metav1.Condition) bool { return meta.IsStatusConditionTrue(conds, typ) })
}

// awaitingApproval counts plans held for approval (a provider upgrade among them), or
// refused as destructive.
func awaitingApproval(conds []metav1.Condition) bool {
	synced := meta.FindStatusCondition(conds, common.TypeSynced)
	return synced != nil && synced.Status == metav1.ConditionFalse &&
		(synced.Reason == common.ReasonAwaitingApproval || synced.Reason == common.ReasonDestructiveChangeRefused ||
			synced.Reason == common.ReasonProviderUpgrade)
}

// overdueAfter is how many drift intervals a settled resource may go unplanned before
// its drift checks count as falling behind: the interval, its jitter (a tenth at most)
// and a wait in the queue behind new work fit well within two.
const overdueAfter = 2

// driftCheckOverdue counts the resources whose drift checks fall behind: Synced and
// Ready (the ones only drift checks plan), last planned more than overdueAfter drift
// intervals ago. A controller with no drift interval counts none.
func driftCheckOverdue(v view) bool {
	mg, ok := v.obj.(resource.Managed)
	if !ok || !meta.IsStatusConditionTrue(v.conds, common.TypeSynced) || !meta.IsStatusConditionTrue(v.conds, common.TypeReady) {
		return false
	}
	last := mg.GetManagedStatus().Terraform.LastPlanTime
	interval := mg.GetManagedSpec().Timing.DriftIntervalOr(v.driftInterval)
	return last != nil && interval > 0 && v.now.Sub(last.Time) > overdueAfter*interval
}

// managedGauges and claimGauges are the counts of managed resources and of claims.
var (
	managedGauges = []gauge{
		newGauge("terraplane_managed_exists", "Managed resources that exist, per kind and API group.", always),
		newGauge("terraplane_managed_ready", "Managed resources whose Ready condition is True, per kind and API group.", isTrue(common.TypeReady)),
		newGauge("terraplane_managed_synced", "Managed resources whose Synced condition is True, per kind and API group.", isTrue(common.TypeSynced)),
		newGauge("terraplane_managed_awaiting_approval",
			"Managed resources with a plan awaiting approval (a provider upgrade among them) or refused as destructive, per kind and API group.", onConditions(awaitingApproval)),
		newGauge("terraplane_managed_drifted", "Managed resources whose Drifted condition is True, per kind and API group.", isTrue(common.TypeDrifted)),
		newGauge("terraplane_managed_stalled",
			"Managed resources whose Stalled condition is True (their latest edit waits for someone), per kind and API group.", isTrue(common.TypeStalled)),
		newGauge("terraplane_managed_drift_check_overdue",
			"Managed resources, Synced and Ready, last planned more than twice their drift interval ago: drift checks are falling behind, per kind and API group.", driftCheckOverdue),
	}
	claimGauges = []gauge{
		newGauge("terraplane_claim_exists", "Claims that exist, per kind and API group.", always),
		newGauge("terraplane_claim_ready", "Claims whose Ready condition is True, per kind and API group.", isTrue(common.TypeReady)),
		newGauge("terraplane_claim_stalled", "Claims whose Stalled condition is True, per kind and API group.", isTrue(common.TypeStalled)),
	}
)

// objectSource is one manager's view of its objects for the gauges.
type objectSource struct {
	// cached reads the manager's cache in place; Reader lists what it does not hold (the
	// unstructured claims of a ClaimDefinition's kinds).
	cached cacheread.Source
	// reg names the kinds, scheme the types of their lists.
	reg    *registry.Registry
	scheme *runtime.Scheme
	// holds says whether this replica holds the shard of a Terraform kind's resource;
	// nil when the resources are not sharded.
	holds func(types.UID) bool
	// elected is closed once this replica leads (at once without leader election).
	elected <-chan struct{}
	// driftInterval is the controller's, for resources that set none of their own.
	driftInterval time.Duration
	// now reads the clock; nil means time.Now.
	now func() time.Time
}

// objectCollector counts claims and managed resources by condition. Each series comes
// from one replica only, so that sum() over the replicas is the cluster's count: the
// resources of a sharded kind from the replica that holds their shard, every other
// kind's from the leader; a replica that is not the leader reports none of those.
type objectCollector struct {
	mu  sync.Mutex
	src *objectSource
}

// objects is the process's collector, registered once; the latest manager set up points
// it at its own objects (tests run several managers in one process).
var objects = &objectCollector{}

// RegisterObjectGauges points the process's object gauges at the objects src reads
// from a manager's cache: the kinds reg names, counted by this replica once elected
// closes, and, when holds is not nil, the resources of sharded kinds whose shard it
// holds; driftInterval is the controller's, for resources that set none.
func RegisterObjectGauges(src cacheread.Source, reg *registry.Registry, elected <-chan struct{}, holds func(types.UID) bool, driftInterval time.Duration) error {
	source := &objectSource{cached: src, reg: reg, scheme: reg.Scheme(), elected: elected, holds: holds, driftInterval: driftInterval}
	objects.mu.Lock()
	objects.src = source
	objects.mu.Unlock()
	err := metrics.Registry.Register(objects)
	if errors.As(err, new(prometheus.AlreadyRegisteredError)) {
		return nil
	}
	return err
}

// Describe sends the gauges' descriptions.
func (c *objectCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, g := range append(append([]gauge{}, managedGauges...), claimGauges...) {
		ch <- g.desc
	}
}

// Collect counts the objects of every kind this replica reports on.
func (c *objectCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	src := c.src
	c.mu.Unlock()
	if src == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	leader := closed(src.elected)
	for _, k := range src.reg.ManagedKinds() {
		sharded := k.Terraform != nil && src.holds != nil
		if !sharded && !leader {
			continue
		}
		holds := func(types.UID) bool { return true }
		if sharded {
			holds = src.holds
		}
		src.emit(ctx, ch, k.GVK, k.New(), k.NewList(), managedGauges, holds)
	}
	if !leader {
		return
	}
	for _, k := range src.reg.ClaimKinds() {
		if obj, list := src.claimList(k); list != nil {
			src.emit(ctx, ch, k.GVK, obj, list, claimGauges, func(types.UID) bool { return true })
		}
	}
}

// emit reads the objects of kind gvk (obj, listed into list where the cache does not
// hold them) and sends each gauge's count of those holds says this replica reports on;
// nothing when they cannot be read. It reads the cache's own objects in place: a scrape
// copies none of the fleet.
func (s *objectSource) emit(ctx context.Context, ch chan<- prometheus.Metric, gvk schema.GroupVersionKind, obj client.Object, list client.ObjectList,
	gauges []gauge, holds func(types.UID) bool) {
	counts := make([]float64, len(gauges))
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	at := now()
	err := s.cached.Each(ctx, obj, list, "", func(obj client.Object) {
		if !holds(obj.GetUID()) {
			return
		}
		v := view{obj: obj, conds: conditionsOf(obj), now: at, driftInterval: s.driftInterval}
		for i, g := range gauges {
			if g.count(v) {
				counts[i]++
			}
		}
	})
	if err != nil {
		return
	}
	for i, g := range gauges {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, counts[i], gvk.Kind, gvk.Group)
	}
}

// claimList is an object and an empty list of claim kind k: typed from the scheme, or,
// for a kind a ClaimDefinition defines, unstructured and read with List (as its
// reconciler reads it, not from an informer of the cache); a nil list when neither.
func (s *objectSource) claimList(k *registry.ClaimKind) (client.Object, client.ObjectList) {
	listGVK := k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List")
	if !k.Defined {
		obj, oerr := s.scheme.New(k.GVK)
		list, lerr := s.scheme.New(listGVK)
		o, ok := obj.(client.Object)
		l, lok := list.(client.ObjectList)
		if oerr != nil || lerr != nil || !ok || !lok {
			return nil, nil
		}
		return o, l
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(listGVK)
	return nil, list
}

// conditionsOf reads obj's status conditions: a claim's, a managed resource's, or an
// unstructured object's.
func conditionsOf(obj client.Object) []metav1.Condition {
	switch o := obj.(type) {
	case resource.Managed:
		return o.GetManagedStatus().Conditions
	case resource.Claim:
		return o.GetClaimStatus().Conditions
	case *unstructured.Unstructured:
		raw, found, err := unstructured.NestedSlice(o.Object, "status", "conditions")
		if err != nil || !found {
			return nil
		}
		var st struct {
			Conditions []metav1.Condition `json:"conditions"`
		}
		if runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"conditions": raw}, &st) != nil {
			return nil
		}
		return st.Conditions
	}
	return nil
}

// closed reports whether ch is closed; a nil channel is not.
func closed(ch <-chan struct{}) bool {
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
