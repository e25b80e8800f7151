package terraform

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

// activityFirst is how long a terraform command runs before it reports what it is
// doing (a shorter one reports nothing), and activityEvery how often it reports again.
var activityFirst, activityEvery = 5 * time.Second, 10 * time.Second

// watched runs call, one of the run's terraform commands, and while it runs (after
// activityFirst, then every activityEvery) writes what terraform is doing into the resource's Reconciling
// condition (reason TerraformRunning): the resource operation in flight and for how
// long, and a newer generation queued behind the run. The reconcile waits in call
// meanwhile, so the status written is the one it goes on from.
func watched[T any](ctx context.Context, e *run, call func() (T, error)) (T, error) {
	if e.progress == nil {
		return call()
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		e.reportActivity(ctx, stop)
	}()
	v, err := call()
	close(stop)
	<-done
	return v, err
}

// reportActivity writes the activity of the run's command until stop closes.
func (e *run) reportActivity(ctx context.Context, stop <-chan struct{}) {
	tick := time.NewTimer(activityFirst)
	defer tick.Stop()
	last := ""
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			tick.Reset(activityEvery)
		}
		act, err := e.t.runner.Activity(ctx, e.ws.Workspace)
		if err != nil {
			log.FromContext(ctx).V(1).Info("terraform's activity not read", "error", err.Error())
			continue
		}
		msg := activityMessage(e.mg.GetGeneration(), act, e.queuedGeneration(ctx), time.Now())
		if msg == "" || msg == last {
			continue
		}
		select {
		case <-stop: // the command ended: the reconcile writes the status from here
			return
		default:
		}
		st := e.mg.GetManagedStatus()
		resource.SetCondition(&st.Conditions, e.mg.GetGeneration(), common.TypeReconciling, metav1.ConditionTrue, common.ReasonTerraformRunning, msg)
		if err := e.progress(ctx); err != nil {
			log.FromContext(ctx).V(1).Info("terraform's activity not written", "error", err.Error())
			continue
		}
		last = msg
	}
}

// queuedGeneration is the resource's generation as the cache has it now, when newer
// than the one this run applies; 0 otherwise.
func (e *run) queuedGeneration(ctx context.Context) int64 {
	latest := e.mg.DeepCopyObject().(client.Object)
	if err := e.t.client.Get(ctx, client.ObjectKeyFromObject(e.mg), latest); err != nil || latest.GetGeneration() <= e.mg.GetGeneration() {
		return 0
	}
	return latest.GetGeneration()
}

// activityMessage says what terraform does for generation gen at now, and that
// generation queued (when not 0) waits behind it; "" when no command streams its
// progress.
func activityMessage(gen int64, act engine.Activity, queued int64, now time.Time) string {
	what := act.Describe(now)
	if what == "" {
		return ""
	}
	msg := fmt.Sprintf("generation %d: %s", gen, what)
	if queued > 0 {
		msg += fmt.Sprintf("; generation %d is queued behind this run", queued)
	}
	return msg
}
