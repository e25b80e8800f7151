package claim

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// reconciling gives m one condition of type typ.
func reconciling(m *terraformv1.Module, typ string) *terraformv1.Module {
	m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue})
	return m
}

func TestFirstStatusWait(t *testing.T) {
	module := func(age time.Duration, phase common.BindingPhase, conds int) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Now().Add(-age))}}
		m.Status.BindingPhase = phase
		for range conds {
			m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: common.TypeReady})
		}
		return m
	}
	for name, m := range map[string]*terraformv1.Module{
		"new, unreported":               module(0, "", 0),
		"applying its first generation": reconciling(module(0, "", 0), common.TypeReconciling),
	} {
		if w := firstStatusWait(&storagev1.Bucket{}, m); w <= statusCoalesce-time.Second || w > statusCoalesce {
			t.Errorf("%s: wait %v, want about %v", name, w, statusCoalesce)
		}
	}
	queued := &storagev1.Bucket{}
	queued.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: metav1.ConditionTrue, Reason: ReasonQueued}}
	if w := firstStatusWait(queued, module(time.Minute-queuedCoalesce, "", 0)); w != 0 {
		t.Errorf("a claim that was Queued, its resource older than %v: wait %v, want 0", queuedCoalesce, w)
	}
	if w := firstStatusWait(queued, module(statusCoalesce, "", 0)); w <= queuedCoalesce-statusCoalesce-time.Second {
		t.Errorf("a claim that was Queued: wait %v, want about %v", w, queuedCoalesce-statusCoalesce)
	}
	for name, m := range map[string]*terraformv1.Module{
		"old and unreported": module(time.Minute, "", 0),
		"reported phase":     module(0, common.BindingPhaseBound, 0),
		"reported condition": module(0, "", 1),
		"reported Synced":    reconciling(module(0, "", 0), common.TypeSynced),
	} {
		if w := firstStatusWait(&storagev1.Bucket{}, m); w != 0 {
			t.Errorf("%s: wait %v, want 0", name, w)
		}
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
	claim.Status.ObservedGeneration = 3
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
		resource.SetProgress(&claim.Status.Conditions, &claim.Status.ObservedGeneration, claim.Generation, appliedBy(m))
		if got := meta.FindStatusCondition(claim.Status.Conditions, common.TypeReady).ObservedGeneration; got != 3 {
			t.Fatalf("round %d: Ready speaks for generation %d, want 3 (the one applied)", round, got)
		}
		if claim.Status.ObservedGeneration != 4 {
			t.Fatalf("round %d: status.observedGeneration %d, want 4 (observed, stalled)", round, claim.Status.ObservedGeneration)
		}
		meta.RemoveStatusCondition(&claim.Status.Conditions, common.TypeSynced)
	}
}

// TestReadyWaitsForTheFirstApply: a claim that waited for its resource (Ready=False about
// its current generation) and whose resource is Ready but has not applied its latest
// generation yet mirrors Ready about no generation it applied, so kubectl wait keeps
// waiting; once the resource applies it, Ready and status.observedGeneration catch up.
func TestReadyWaitsForTheFirstApply(t *testing.T) {
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	claim.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionFalse, ObservedGeneration: 2, Reason: ReasonWaiting}}
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
	m.Status.Conditions = []metav1.Condition{
		{Type: common.TypeReady, Status: metav1.ConditionTrue, ObservedGeneration: 1},
		{Type: common.TypeSynced, Status: metav1.ConditionTrue, ObservedGeneration: 1},
	}
	r := &Reconciler{}
	r.mirrorResource(claim, m, appliedBy(m))
	resource.SetProgress(&claim.Status.Conditions, &claim.Status.ObservedGeneration, claim.Generation, appliedBy(m))
	if got := meta.FindStatusCondition(claim.Status.Conditions, common.TypeReady).ObservedGeneration; got >= claim.Generation {
		t.Fatalf("Ready speaks for generation %d before the resource applied the claim's generation %d", got, claim.Generation)
	}
	m.Status.Conditions[1].ObservedGeneration = 2
	r.mirrorResource(claim, m, appliedBy(m))
	resource.SetProgress(&claim.Status.Conditions, &claim.Status.ObservedGeneration, claim.Generation, appliedBy(m))
	if got := meta.FindStatusCondition(claim.Status.Conditions, common.TypeReady).ObservedGeneration; got != 2 || claim.Status.ObservedGeneration != 2 {
		t.Fatalf("applied: Ready speaks for generation %d, status.observedGeneration %d; want 2 and 2", got, claim.Status.ObservedGeneration)
	}
}

// TestWaitingReadyHasAGeneration: while a claim waits for its resource (none bound yet,
// no Ready on it, or Ready=False), its Ready=False speaks for its current generation, as
// every other condition does.
func TestWaitingReadyHasAGeneration(t *testing.T) {
	for name, conds := range map[string][]metav1.Condition{
		"no Ready yet": nil,
		"creating":     {{Type: common.TypeReady, Status: metav1.ConditionFalse, Reason: common.ReasonCreating, ObservedGeneration: 1}},
		"failing": {{Type: common.TypeReady, Status: metav1.ConditionFalse, Reason: common.ReasonCreating, ObservedGeneration: 1},
			{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: "Boom", ObservedGeneration: 1}},
	} {
		claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
		m.Status.Conditions = conds
		(&Reconciler{}).mirrorResource(claim, m, appliedBy(m))
		ready := meta.FindStatusCondition(claim.Status.Conditions, common.TypeReady)
		if ready == nil || ready.Status != metav1.ConditionFalse || ready.ObservedGeneration != 1 {
			t.Errorf("%s: Ready = %+v, want False about generation 1", name, ready)
		}
	}
}

// TestFirstReady: a claim's time to ready is measured when its Ready first turns True.
func TestFirstReady(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: common.TypeReady, Status: status, Reason: reason}}
	}
	for name, tc := range map[string]struct {
		before, after []metav1.Condition
		want          bool
	}{
		"bound to a resource ready at once":       {nil, ready(metav1.ConditionTrue, common.ReasonAvailable), true},
		"after waiting for the resource":          {ready(metav1.ConditionFalse, ReasonWaiting), ready(metav1.ConditionTrue, common.ReasonAvailable), true},
		"after its create was approved":           {ready(metav1.ConditionFalse, common.ReasonAwaitingApproval), ready(metav1.ConditionTrue, common.ReasonAvailable), true},
		"still ready":                             {ready(metav1.ConditionTrue, common.ReasonAvailable), ready(metav1.ConditionTrue, common.ReasonAvailable), false},
		"not ready yet":                           {nil, ready(metav1.ConditionFalse, ReasonWaiting), false},
		"its resource ready again after Deleting": {ready(metav1.ConditionFalse, common.ReasonDeleting), ready(metav1.ConditionTrue, common.ReasonAvailable), false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := firstReady(tc.before, tc.after); got != tc.want {
				t.Errorf("firstReady = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMirrorActivity: a claim on its way says what terraform does for it when its
// resource's command has run long, naming the resource; a claim whose generation is
// applied, or whose resource only waits to apply, says nothing more.
func TestMirrorActivity(t *testing.T) {
	const running = "generation 4: terraform is creating aws_sqs_queue.q for 6m0s; generation 5 is queued behind this run"
	for name, tc := range map[string]struct {
		claimReconciling bool
		reason           string
		want             string
	}{
		"terraform running long":     {true, common.ReasonTerraformRunning, "Module team/q: " + running},
		"the claim is applied":       {false, common.ReasonTerraformRunning, ""},
		"the resource only applying": {true, common.ReasonApplying, "generation 3 is not applied yet"},
	} {
		t.Run(name, func(t *testing.T) {
			claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
			if tc.claimReconciling {
				resource.MarkReconciling(&claim.Status.Conditions, 3)
			}
			m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "q", Generation: 4}}
			m.SetGroupVersionKind(terraformv1.GroupVersion.WithKind("Module"))
			m.Status.Conditions = []metav1.Condition{{Type: common.TypeReconciling, Status: metav1.ConditionTrue, Reason: tc.reason, Message: running}}
			mirrorActivity(claim, m)
			got := ""
			if c := meta.FindStatusCondition(claim.Status.Conditions, common.TypeReconciling); c != nil {
				got = c.Message
			}
			if got != tc.want {
				t.Errorf("claim's Reconciling %q, want %q", got, tc.want)
			}
		})
	}
}
