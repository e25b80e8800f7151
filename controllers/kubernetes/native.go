package kubernetes

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/resource"
)

// native is what the reconcilers of native (non-Terraform) managed kinds share: status,
// conditions and the connection Secret.
type native struct {
	client   client.Client
	targets  *Targets
	opts     Options
	recorder resource.Recorder
}

// finish derives a native managed resource's binding phase and conditions from the
// reconcile's error and writes status (status.atProvider was filled by the reconcile;
// only this controller writes status, apart from the claim reconciler's Released).
func (r *native) finish(ctx context.Context, orig, mg resource.Managed, err error) (ctrl.Result, error) {
	if !mg.GetDeletionTimestamp().IsZero() && err == nil {
		return ctrl.Result{}, nil
	}
	o := resource.Classify(err, r.opts.Retries())
	if o.Stale() {
		return o.Result()
	}
	resource.SyncBindingPhase(mg)
	st := mg.GetManagedStatus()
	gen := mg.GetGeneration()
	o.Ready(resource.Available()).Set(&st.Conditions, gen)
	notes := o.SetSynced(&st.Conditions, gen)
	return resource.Finisher{Client: r.client, Recorder: r.recorder}.Finish(ctx, mg, orig, o, notes)
}
