package claimdefinition

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// crdPoll is how soon a definition waiting for its CRDs is looked at again (their watch
// usually comes first): sooner than resource.WaitRetry, as a CRD is served in seconds.
const crdPoll = 2 * time.Second

// finish maps the error (resource.Classify) to Synced, derives Ready from it and writes
// the status once: Ready=True only when the kinds are served; Reconciling until then, or
// Stalled when someone must act (as for claims and managed resources).
func (r *Reconciler) finish(ctx context.Context, c *run) (ctrl.Result, error) {
	if !c.def.DeletionTimestamp.IsZero() && c.err == nil {
		return ctrl.Result{}, nil // finalizer removed: the definition is gone
	}
	st := &c.def.Status
	return resource.Finisher{Client: r.client, Recorder: r.events}.End(ctx, resource.Ending{Object: c.def, Orig: c.orig,
		Conditions: &st.Conditions, Observed: &st.ObservedGeneration, Ready: resource.FromOutcome(resource.ReadyBecause(apiextv1.ReasonServed, c.served())),
		Outcome: resource.Classify(c.err, resource.Retries{UserError: r.opts.UserErrorRetry, Waiting: crdPoll}),
		Status:  c.status, Applied: func(o resource.Outcome) bool { return o.Succeeded() && resource.IsReady(st.Conditions) }})
}

// served says which kinds are served, and under which names they collide.
func (c *run) served() string {
	msg := "claims of kind " + c.def.Spec.Names.Kind + " and classes of kind " + c.def.ClassKindName() + " are served"
	if len(c.conflicts) > 0 {
		msg += "; but " + strings.Join(c.conflicts, "; ") + " (use the full name, e.g. kubectl get " + c.def.Spec.Names.Plural + "." + c.def.Spec.Group + ")"
	}
	return msg
}

// status records the CRDs' names and Established, and warns once of name conflicts.
func (c *run) status(o *resource.Outcome) []resource.Note {
	st, gen := &c.def.Status, c.def.Generation
	if c.claim != nil {
		st.ClaimCRD, st.ClassCRD = c.claim.Name, c.class.Name
		st.Untranslated = c.untranslated
	}
	switch {
	case c.established:
		resource.SetCondition(&st.Conditions, gen, apiextv1.TypeEstablished, metav1.ConditionTrue, apiextv1.TypeEstablished, "both CustomResourceDefinitions are served")
	case c.checked || meta.FindStatusCondition(st.Conditions, apiextv1.TypeEstablished) == nil:
		resource.SetCondition(&st.Conditions, gen, apiextv1.TypeEstablished, metav1.ConditionFalse, apiextv1.ReasonWaitingForCRD, "the CustomResourceDefinitions are not served yet")
	}
	before := meta.FindStatusCondition(c.orig.Status.Conditions, common.TypeReady)
	if len(c.conflicts) == 0 || !o.Succeeded() || before != nil && before.Message == c.served() {
		return nil
	}
	return []resource.Note{{Type: corev1.EventTypeWarning, Reason: apiextv1.ReasonNameConflict, Message: strings.Join(c.conflicts, "; ")}}
}
