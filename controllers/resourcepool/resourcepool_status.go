package resourcepool

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/resourcepool"
)

// Ready reasons of ResourcePools.
const (
	// ReasonFull: spec.size members are Ready.
	ReasonFull = "Full"
	// ReasonProvisioning: members are on their way.
	ReasonProvisioning = "Provisioning"
	// ReasonMembersFailed: members failed, and none is on its way.
	ReasonMembersFailed = "MembersFailed"
	// ReasonNoneWaiting: an autoscaled pool has a cluster for every application it serves.
	ReasonNoneWaiting = "NoneWaiting"
)

// finish records the counts and conditions, and maps the error to a result.
func (r *Reconciler) finish(ctx context.Context, p *pass, err error) (ctrl.Result, error) {
	pool := p.pool
	return resource.Finisher{Client: r.client, Recorder: r.recorder}.End(ctx, resource.Ending{Object: pool, Orig: pool.DeepCopy(),
		Conditions: &pool.Status.Conditions, Observed: &pool.Status.ObservedGeneration, Ready: p.ready, Status: p.record,
		Outcome: resource.Classify(err, resource.Retries{Success: r.opts.Resync, UserError: r.opts.UserErrorRetry, Waiting: resource.WaitRetry}),
		Applied: func(resource.Outcome) bool { return true }}) // a pool's generation is applied once looked at: Ready tells its state
}

// ready is the pool's Ready rule: True once size members are Ready, else why not (the
// reconcile's error first).
func (p *pass) ready(o resource.Outcome, _ []metav1.Condition) (resource.Ready, bool) {
	status, reason, msg := readiness(p.pool.Spec, p.counts, p.decision)
	if p.auto != nil {
		status, reason, msg = autoscaleReadiness(*p.pool.Spec.Autoscale, p.counts, *p.auto)
	}
	if !o.Succeeded() && status != metav1.ConditionTrue {
		reason, msg = o.Reason, o.Message
	}
	return resource.Ready{Status: status, Reason: reason, Message: msg}, true
}

// record records the members counted, in the status and the metrics, and returns the
// events of the pass.
func (p *pass) record(o *resource.Outcome) []resource.Note {
	if p.counted {
		st := &p.pool.Status
		st.Ready, st.Provisioning, st.Failed, st.HandedOut = p.counts.Ready, p.counts.Provisioning, p.counts.Failed, p.counts.HandedOut
		resourcepool.ObserveMembers(p.pool.Namespace, p.pool.Name, p.counts)
	}
	if p.auto != nil {
		p.pool.Status.Clusters, p.pool.Status.Pending = p.auto.Clusters, p.auto.Pending
		if r := p.auto.Recheck; r > 0 && o.Succeeded() && (o.Requeue == 0 || r < o.Requeue) {
			o.Requeue = r + 100*time.Millisecond // look again when an idle member may go
		}
	}
	return p.notes
}

// autoscaleReadiness is an autoscaled pool's Ready condition: True while no application
// waits for a cluster it would make, else why they wait.
func autoscaleReadiness(a scalingv1.Autoscale, c resourcepool.Counts, d resourcepool.AutoscaleDecision) (metav1.ConditionStatus, string, string) {
	ready := 0
	for _, c := range d.Clusters {
		if c.Ready {
			ready++
		}
	}
	counts := fmt.Sprintf("%d clusters (%d Ready, at least %d, at most %d), %d applications waiting", len(d.Clusters), ready, a.Min, a.Max, d.Pending)
	switch {
	case d.Held == resourcepool.ReasonAtMax:
		return metav1.ConditionFalse, resourcepool.ReasonAtMax, counts + "; autoscale.max is reached, and the applications wait until a cluster has room"
	case d.Pending > 0 && c.Failed > 0 && c.Provisioning == 0:
		return metav1.ConditionFalse, ReasonMembersFailed, counts + "; failed members keep their places: see their Synced conditions, and delete them to have them replaced"
	case d.Pending > 0:
		return metav1.ConditionFalse, resourcepool.ReasonApplicationsWaiting, counts + "; clusters are provisioning for them"
	default:
		return metav1.ConditionTrue, ReasonNoneWaiting, counts
	}
}

// readiness is the pool's Ready condition: True once size members are Ready, else why not.
func readiness(spec scalingv1.ResourcePoolSpec, c resourcepool.Counts, d resourcepool.Decision) (metav1.ConditionStatus, string, string) {
	counts := fmt.Sprintf("%d of %d members ready, %d provisioning, %d failed, %d handed out", c.Ready, spec.Size, c.Provisioning, c.Failed, c.HandedOut)
	switch {
	case c.Ready >= spec.Size:
		return metav1.ConditionTrue, ReasonFull, counts
	case d.Held == resourcepool.ReasonAtMaxSize && c.Provisioning == 0:
		return metav1.ConditionFalse, resourcepool.ReasonAtMaxSize, counts + fmt.Sprintf("; maxSize %d counts the members handed out, and no more are made until claims filled from the pool are deleted", *spec.MaxSize)
	case c.Failed > 0 && c.Provisioning == 0:
		return metav1.ConditionFalse, ReasonMembersFailed, counts + "; failed members keep their places: see their Synced conditions, and delete them to have them replaced"
	default:
		return metav1.ConditionFalse, ReasonProvisioning, counts
	}
}
