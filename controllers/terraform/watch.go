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
// doing (a shorter one reports nothing): ten seconds, when terraform itself first says
// "Still creating...". A report writes the resource's status and its claim's, so a shorter
// wait turned every run slowed by a busy fleet into two more API writes, just when the API
// server had least to spare. activityEvery is how often it looks again.
// What terraform does is written as soon as it changes; the time spent on the same
// operation is written again after activityEvery, then after twice as long each time,
// up to activityAtMost apart.
var activityFirst, activityEvery, activityAtMost = 10 * time.Second, 10 * time.Second, 5 * time.Minute

// watched runs call, one of the run's terraform commands, and while it runs (after
// activityFirst) writes what terraform is doing into the resource's Reconciling
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
	var cadence reportCadence
	reported := false
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
		queued, now := e.queuedGeneration(ctx), time.Now()
		msg, key := activityMessage(e.mg.GetGeneration(), act, queued, now), activityKey(act, queued)
		// The first report goes out even with nothing to say: it carries the mark of a
		// new generation being applied, when that is due (and writes nothing otherwise).
		if (msg == "" || !cadence.due(key, now)) && reported {
			continue
		}
		select {
		case <-stop: // the command ended: the reconcile writes the status from here
			return
		default:
		}
		if msg != "" {
			st := e.mg.GetManagedStatus()
			resource.SetCondition(&st.Conditions, e.mg.GetGeneration(), common.TypeReconciling, metav1.ConditionTrue, common.ReasonTerraformRunning, msg)
		}
		if err := e.progress(ctx); err != nil {
			log.FromContext(ctx).V(1).Info("terraform's activity not written", "error", err.Error())
			continue
		}
		reported = true
		if msg != "" {
			cadence.wrote(key, now)
		}
	}
}

// reportCadence decides when an activity report is written: at once when what terraform
// does changes, else once its time has grown enough to say, so that a create of an hour
// writes the resource's status (and its claim's) about fifteen times, not 360.
type reportCadence struct {
	key     string
	written time.Time
	wait    time.Duration
}

// due reports whether a report of key at now is written.
func (c *reportCadence) due(key string, now time.Time) bool {
	return key != c.key || now.Sub(c.written) >= c.wait
}

// wrote records a report of key written at now.
func (c *reportCadence) wrote(key string, now time.Time) {
	if key == c.key {
		c.wait = min(2*c.wait, activityAtMost)
	} else {
		c.wait = activityEvery
	}
	c.key, c.written = key, now
}

// activityKey is what an activity report says, times left out.
func activityKey(act engine.Activity, queued int64) string {
	key := act.Verb
	if len(act.Operations) > 0 {
		key += " " + act.Operations[0].Action + " " + act.Operations[0].Address
	}
	return fmt.Sprintf("%s, %d in flight, generation %d queued", key, len(act.Operations), queued)
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
