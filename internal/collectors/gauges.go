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
	count func(conds []metav1.Condition) bool
}

func newGauge(name, help string, count func([]metav1.Condition) bool) gauge {
	return gauge{desc: prometheus.NewDesc(name, help, []string{"kind", "group"}, nil), count: count}
}

func always([]metav1.Condition) bool { return true }

func isTrue(typ string) func([]metav1.Condition) bool {
	return func(conds []metav1.Condition) bool { return meta.IsStatusConditionTrue(conds, typ) }
}

// awaitingApproval counts plans held for approval (a provider upgrade among them), or
// refused as destructive.
func awaitingApproval(conds []metav1.Condition) bool {
	synced := meta.FindStatusCondition(conds, common.TypeSynced)
	return synced != nil && synced.Status == metav1.ConditionFalse &&
		(synced.Reason == common.ReasonAwaitingApproval || synced.Reason == common.ReasonDestructiveChangeRefused ||
			synced.Reason == common.ReasonProviderUpgrade)
}

// managedGauges and claimGauges are the counts of managed resources and of claims.
var (
	managedGauges = []gauge{
		newGauge("terraplane_managed_exists", "Managed resources that exist, per kind and API group.", always),
		newGauge("terraplane_managed_ready", "Managed resources whose Ready condition is True, per kind and API group.", isTrue(common.TypeReady)),
		newGauge("terraplane_managed_synced", "Managed resources whose Synced condition is True, per kind and API group.", isTrue(common.TypeSynced)),
		newGauge("terraplane_managed_awaiting_approval",
			"Managed resources with a plan awaiting approval (a provider upgrade among them) or refused as destructive, per kind and API group.", awaitingApproval),
		newGauge("terraplane_managed_drifted", "Managed resources whose Drifted condition is True, per kind and API group.", isTrue(common.TypeDrifted)),
		newGauge("terraplane_managed_stalled",
			"Managed resources whose Stalled condition is True (their latest edit waits for someone), per kind and API group.", isTrue(common.TypeStalled)),
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
// holds.
func RegisterObjectGauges(src cacheread.Source, reg *registry.Registry, elected <-chan struct{}, holds func(types.UID) bool) error {
	source := &objectSource{cached: src, reg: reg, scheme: reg.Scheme(), elected: elected, holds: holds}
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
	err := s.cached.Each(ctx, obj, list, "", func(obj client.Object) {
		if !holds(obj.GetUID()) {
			return
		}
		conds := conditionsOf(obj)
		for i, g := range gauges {
			if g.count(conds) {
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
