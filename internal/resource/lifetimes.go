package resource

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// LifetimeBuckets are the buckets, in seconds, of the time-to-ready and deletion
// histograms: from a second to two hours (an RDS or EKS create takes 10 to 20 minutes).
var LifetimeBuckets = []float64{1, 2.5, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200}

// Family is the kind of object a lifetime histogram measures.
type Family string

// Families of objects whose lifetimes are measured.
const (
	// ManagedFamily is every managed kind's.
	ManagedFamily Family = "managed"
	// ClaimFamily is every claim kind's.
	ClaimFamily Family = "claim"
)

var (
	firstReadySeconds = map[Family]*prometheus.HistogramVec{
		ManagedFamily: lifetime("terraplane_managed_first_ready_seconds",
			"Time from a managed resource's creation to its first Ready=True, per kind and API group."),
		ClaimFamily: lifetime("terraplane_claim_first_ready_seconds",
			"Time from a claim's creation to its first Ready=True, per kind and API group."),
	}
	deletionSeconds = map[Family]*prometheus.HistogramVec{
		ManagedFamily: lifetime("terraplane_managed_deletion_seconds",
			"Time from a managed resource's deletion to the removal of its finalizer (its destroy included), per kind and API group."),
		ClaimFamily: lifetime("terraplane_claim_deletion_seconds",
			"Time from a claim's deletion to the removal of its finalizer (its resource's deletion included), per kind and API group."),
	}
)

func lifetime(name, help string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: LifetimeBuckets}, []string{"kind", "group"})
}

func init() {
	for _, h := range []map[Family]*prometheus.HistogramVec{firstReadySeconds, deletionSeconds} {
		for _, v := range h {
			metrics.Registry.MustRegister(v)
		}
	}
}

// ObserveFirstReady records, for an object of family and kind gvk created at created,
// that it is Ready for the first time now.
func ObserveFirstReady(f Family, gvk schema.GroupVersionKind, created time.Time) {
	firstReadySeconds[f].WithLabelValues(gvk.Kind, gvk.Group).Observe(time.Since(created).Seconds())
}

// ObserveDeletion records, for an object of family and kind gvk whose deletion was asked
// at deleted, that its finalizer is gone now; nil (an object not being deleted) records
// nothing.
func ObserveDeletion(f Family, gvk schema.GroupVersionKind, deleted *metav1.Time) {
	if deleted == nil || deleted.IsZero() {
		return
	}
	deletionSeconds[f].WithLabelValues(gvk.Kind, gvk.Group).Observe(time.Since(deleted.Time).Seconds())
}
