package resource

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// TestSetProgress: an object whose edit is applied catches up; one whose edit is refused
// for a reason someone must act on is Stalled and has observed the edit; anything else
// (an edit on its way, a failure retried with backoff) is Reconciling, and its
// observedGeneration stays at the generation last applied.
func TestSetProgress(t *testing.T) {
	type progress struct {
		Observed    int64
		Reconciling string // the condition's reason; "" when absent
		Stalled     string
	}
	synced := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: common.TypeSynced, Status: status, Reason: reason, ObservedGeneration: 3}}
	}
	for name, tc := range map[string]struct {
		conds   []metav1.Condition
		applied bool
		want    progress
	}{
		"applied": {synced(metav1.ConditionTrue, common.ReasonReconcileSuccess), true, progress{Observed: 3}},
		"applied, was stalled": {append(synced(metav1.ConditionTrue, common.ReasonReconcileSuccess),
			metav1.Condition{Type: common.TypeStalled, Status: metav1.ConditionTrue, Reason: common.ReasonAwaitingApproval}), true, progress{Observed: 3}},
		"not applied yet":  {synced(metav1.ConditionTrue, common.ReasonReconcileSuccess), false, progress{Observed: 2, Reconciling: common.ReasonApplying}},
		"waiting":          {synced(metav1.ConditionTrue, common.ReasonStateLocked), false, progress{Observed: 2, Reconciling: common.ReasonApplying}},
		"transient error":  {synced(metav1.ConditionFalse, common.ReasonReconcileError), false, progress{Observed: 2, Reconciling: common.ReasonApplying}},
		"refused, stalled": {synced(metav1.ConditionFalse, common.ReasonDestructiveChangeRefused), false, progress{Observed: 3, Stalled: common.ReasonDestructiveChangeRefused}},
		"awaiting approval, was reconciling": {append(synced(metav1.ConditionFalse, common.ReasonAwaitingApproval),
			metav1.Condition{Type: common.TypeReconciling, Status: metav1.ConditionTrue, Reason: common.ReasonApplying}), false,
			progress{Observed: 3, Stalled: common.ReasonAwaitingApproval}},
		"bad input, stalled": {synced(metav1.ConditionFalse, "InvalidInput"), false, progress{Observed: 3, Stalled: "InvalidInput"}},
		"never reconciled":   {nil, false, progress{Observed: 2, Reconciling: common.ReasonApplying}},
	} {
		t.Run(name, func(t *testing.T) {
			conds, observed := tc.conds, int64(2)
			SetProgress(&conds, &observed, 3, tc.applied)
			got := progress{Observed: observed}
			if c := meta.FindStatusCondition(conds, common.TypeReconciling); c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == 3 {
				got.Reconciling = c.Reason
			}
			if c := meta.FindStatusCondition(conds, common.TypeStalled); c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == 3 {
				got.Stalled = c.Reason
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
			if Applying(conds, 3) != (tc.want.Reconciling != "") {
				t.Errorf("Applying = %v, want %v", Applying(conds, 3), tc.want.Reconciling != "")
			}
		})
	}
}
