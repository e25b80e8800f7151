package resource

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// SetProgress records how far an object's generation gen got, the way kstatus (and so
// kubectl wait, Flux and Argo CD) reads it, on its conditions and observed, its
// status.observedGeneration. Claims, managed resources and every other kind with Ready
// and Synced (classes, ClaimDefinitions, ProviderConfigs, stacks, workloads) share the
// rule:
//   - stalled: Synced=False for a reason someone must act on (bad input, a plan awaiting
//     approval or refused; anything but ReconcileError, which is retried):
//     observedGeneration catches up, Stalled=True with Synced's reason and message;
//   - applied: observedGeneration catches up, neither Reconciling nor Stalled;
//   - otherwise in progress: Reconciling=True, and observedGeneration stays at the last
//     generation applied or stalled.
func SetProgress(conds *[]metav1.Condition, observed *int64, gen int64, applied bool) {
	synced := meta.FindStatusCondition(*conds, common.TypeSynced)
	switch {
	case synced != nil && synced.Status == metav1.ConditionFalse && synced.Reason != common.ReasonReconcileError:
		MarkStalled(conds, observed, gen, synced.Reason, synced.Message)
	case applied:
		*observed = gen
		meta.RemoveStatusCondition(conds, common.TypeReconciling)
		meta.RemoveStatusCondition(conds, common.TypeStalled)
	default:
		MarkReconciling(conds, gen)
	}
}

// MarkStalled records that generation gen cannot be applied until someone acts, for
// reason: observed catches up, Stalled=True with reason and msg, and no Reconciling.
// Kinds whose reconcile may succeed yet leave them unusable (a ModuleClass whose inputs
// name no variable: Synced=True, Ready=False) call it where SetProgress would read them
// as still in progress.
func MarkStalled(conds *[]metav1.Condition, observed *int64, gen int64, reason, msg string) {
	*observed = gen
	meta.RemoveStatusCondition(conds, common.TypeReconciling)
	SetCondition(conds, gen, common.TypeStalled, metav1.ConditionTrue, reason, msg)
}

// MarkReconciling records that generation gen is being applied: Reconciling=True, and
// no Stalled.
func MarkReconciling(conds *[]metav1.Condition, gen int64) {
	meta.RemoveStatusCondition(conds, common.TypeStalled)
	SetCondition(conds, gen, common.TypeReconciling, metav1.ConditionTrue, common.ReasonApplying,
		fmt.Sprintf("generation %d is not applied yet", gen))
}

// Applying reports whether conds already say generation gen is being applied.
func Applying(conds []metav1.Condition, gen int64) bool {
	c := meta.FindStatusCondition(conds, common.TypeReconciling)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == gen
}
