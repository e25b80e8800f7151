package claim

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

func TestFirstStatusWait(t *testing.T) {
	module := func(age time.Duration, phase common.BindingPhase, conds int) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Now().Add(-age))}}
		m.Status.BindingPhase = phase
		for range conds {
			m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: common.TypeReady})
		}
		return m
	}
	if w := firstStatusWait(module(0, "", 0)); w <= statusCoalesce-time.Second || w > statusCoalesce {
		t.Errorf("a new, unreported resource: wait %v, want about %v", w, statusCoalesce)
	}
	for name, m := range map[string]*terraformv1.Module{
		"old and unreported": module(time.Minute, "", 0),
		"reported phase":     module(0, common.BindingPhaseBound, 0),
		"reported condition": module(0, "", 1),
	} {
		if w := firstStatusWait(m); w != 0 {
			t.Errorf("%s: wait %v, want 0", name, w)
		}
	}
}

// TestSetProgress: a claim whose edit is applied catches up; one whose resource refuses
// the edit for a reason someone must act on is Stalled; anything else is Reconciling.
func TestSetProgress(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, ObservedGeneration: gen}
	}
	for name, tc := range map[string]struct {
		synced      metav1.Condition
		applied     bool
		wantGen     int64
		reconciling bool
		stalled     bool
	}{
		"applied":          {cond(common.TypeSynced, metav1.ConditionTrue, ReasonSucceeded, 3), true, 3, false, false},
		"not applied yet":  {cond(common.TypeSynced, metav1.ConditionTrue, ReasonSucceeded, 3), false, 2, true, false},
		"transient error":  {cond(common.TypeSynced, metav1.ConditionFalse, ReasonReconcileError, 3), false, 2, true, false},
		"refused, stalled": {cond(common.TypeSynced, metav1.ConditionFalse, "DestructiveChangeRefused", 3), false, 3, false, true},
	} {
		t.Run(name, func(t *testing.T) {
			claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
			claim.Status.ObservedGeneration = 2
			claim.Status.Conditions = []metav1.Condition{tc.synced}
			setProgress(claim, tc.applied)
			if claim.Status.ObservedGeneration != tc.wantGen {
				t.Errorf("observedGeneration %d, want %d", claim.Status.ObservedGeneration, tc.wantGen)
			}
			if got := meta.IsStatusConditionTrue(claim.Status.Conditions, common.TypeReconciling); got != tc.reconciling {
				t.Errorf("Reconciling %v, want %v", got, tc.reconciling)
			}
			if got := meta.IsStatusConditionTrue(claim.Status.Conditions, common.TypeStalled); got != tc.stalled {
				t.Errorf("Stalled %v, want %v", got, tc.stalled)
			}
		})
	}
}

// TestAppliedBy: only Synced and Ready said about the resource's current generation count.
func TestAppliedBy(t *testing.T) {
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	m.Status.Conditions = []metav1.Condition{
		{Type: common.TypeReady, Status: metav1.ConditionTrue, ObservedGeneration: 2},
		{Type: common.TypeSynced, Status: metav1.ConditionTrue, ObservedGeneration: 1},
	}
	if appliedBy(m) || appliedBy(nil) {
		t.Error("Synced about generation 1 does not apply generation 2")
	}
	m.Status.Conditions[1].ObservedGeneration = 2
	if !appliedBy(m) {
		t.Error("Synced and Ready about generation 2: applied")
	}
}

// TestReadyWaitsForTheApplyWhileStalled: a claim stalled on an edit (its resource awaits
// approval) has observed the edit, but its Ready keeps speaking for the generation last
// applied, however often it is reconciled, so kubectl wait keeps waiting.
func TestReadyWaitsForTheApplyWhileStalled(t *testing.T) {
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Generation: 4}}
	claim.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionTrue, ObservedGeneration: 3}}
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Generation: 5}}
	m.Status.Conditions = []metav1.Condition{
		{Type: common.TypeReady, Status: metav1.ConditionTrue, ObservedGeneration: 5},
		{Type: common.TypeSynced, Status: metav1.ConditionFalse, ObservedGeneration: 5, Reason: common.ReasonAwaitingApproval},
	}
	r := &Reconciler{}
	for round := range 2 {
		r.mirrorResource(claim, m, appliedBy(m))
		claim.Status.Conditions = append(claim.Status.Conditions, metav1.Condition{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: common.ReasonAwaitingApproval})
		setProgress(claim, appliedBy(m))
		if got := meta.FindStatusCondition(claim.Status.Conditions, common.TypeReady).ObservedGeneration; got != 3 {
			t.Fatalf("round %d: Ready speaks for generation %d, want 3 (the one applied)", round, got)
		}
		if claim.Status.ObservedGeneration != 4 {
			t.Fatalf("round %d: status.observedGeneration %d, want 4 (observed, stalled)", round, claim.Status.ObservedGeneration)
		}
		meta.RemoveStatusCondition(&claim.Status.Conditions, common.TypeSynced)
	}
}
