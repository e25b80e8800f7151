package moduleclass

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Reasons of the Ready and Synced conditions.
const (
	ReasonValid   = "ModuleValid"
	ReasonRead    = "ModuleRead"
	ReasonInvalid = "InvalidMapping"
)

// retryProblem is how soon a class stopped by something no watch sees (a repository, a
// registry, a provider mirror) is looked at again.
const retryProblem = time.Minute

// finish derives the conditions from the phase that failed and the error (mapped by
// resource.Classify): Synced says whether the module could be read from its source,
// Ready whether claims can bind to the class, Reconciling and Stalled (as for claims and
// managed resources) whether its generation is checked, or unusable until someone acts. It emits one event per new problem, writes
// the status (guarded: the revision controller writes the class's conditions too, such
// as RolloutPaused), and asks to run again when the source moves (a branch or a tag) or a
// problem may clear by itself.
func (r *Reconciler) finish(ctx context.Context, c *check) (ctrl.Result, error) {
	o := resource.Classify(c.err, resource.Retries{UserError: retryProblem})
	if o.Stale() {
		return o.Result()
	}
	notes := c.record(&o)
	if refresh := r.loader.RefreshPeriod(); c.loaded != nil && c.loaded.Moving && (o.Requeue == 0 || refresh < o.Requeue) {
		o.Requeue = refresh // a branch or a tag moves
	}
	return resource.Finisher{Client: r.client, Recorder: r.events, Guarded: true}.Finish(ctx, c.class, c.orig, o, notes)
}

// record records the outcome o of the check: valid; the module not read (Synced=False,
// retried); or read but unusable until someone fixes the class or the mirror (Synced=True,
// Ready=False, Stalled, retried only when a watch cannot see the fix). It returns the
// events to send.
func (c *check) record(o *resource.Outcome) []resource.Note {
	st, gen := &c.class.Status, c.class.Generation
	switch {
	case c.err == nil:
		resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionTrue, ReasonRead, "")
		resource.ReadyBecause(ReasonValid, "").Set(&st.Conditions, gen)
		resource.SetProgress(&st.Conditions, &st.ObservedGeneration, gen, true)
		return nil
	case c.failed == phaseLoad || o.Err != nil: // the module could not be read
		if c.failed == phaseLoad {
			st.Variables, st.Outputs, st.Revision = nil, nil, ""
		}
		notes := o.SetSynced(&st.Conditions, gen)
		resource.NotReady(o.Reason, o.Message).Set(&st.Conditions, gen)
		resource.SetProgress(&st.Conditions, &st.ObservedGeneration, gen, false) // stalled, or retried
		return notes
	}
	resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionTrue, ReasonRead, "")
	changed := resource.NotReady(o.Reason, o.Message).Set(&st.Conditions, gen)
	resource.MarkStalled(&st.Conditions, &st.ObservedGeneration, gen, o.Reason, o.Message)
	if c.failed != phaseProviders {
		o.Requeue = 0 // the class's own edit fixes it; no watch sees a mirror fill up
	}
	if !changed {
		return nil
	}
	return []resource.Note{{Type: corev1.EventTypeWarning, Reason: o.Reason, Message: o.Message}}
}
