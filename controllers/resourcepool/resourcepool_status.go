package resourcepool

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
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
)

// finish records the counts and conditions, and maps the error to a result.
func (r *Reconciler) finish(ctx context.Context, p *pass, err error) (ctrl.Result, error) {
	pool := p.pool
	orig := pool.DeepCopy()
	o := resource.Classify(err, resource.Retries{Success: r.opts.Resync, UserError: r.opts.UserErrorRetry, Waiting: resource.WaitRetry})
	if o.Stale() {
		return o.Result()
	}
	st := &pool.Status
	notes := o.SetSynced(&st.Conditions, pool.Generation)
	if p.counted {
		st.Ready, st.Provisioning, st.Failed, st.HandedOut = p.counts.Ready, p.counts.Provisioning, p.counts.Failed, p.counts.HandedOut
		resourcepool.ObserveMembers(pool.Namespace, pool.Name, p.counts)
	}
	status, reason, msg := readiness(pool.Spec, p.counts, p.decision)
	if !o.Succeeded() && status != metav1.ConditionTrue {
		reason, msg = o.Reason, o.Message
	}
	resource.SetCondition(&st.Conditions, pool.Generation, common.TypeReady, status, reason, msg)
	st.ObservedGeneration = pool.Generation
	return resource.Finisher{Client: r.client, Recorder: r.recorder}.Finish(ctx, pool, orig, o, append(notes, p.notes...))
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
