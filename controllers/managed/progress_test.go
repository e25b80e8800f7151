package managed

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// progressOf is what kstatus reads of o: status.observedGeneration, and the reasons of
// Reconciling and Stalled when they are True ("" when absent).
type progressOf struct {
	Observed             int64
	Reconciling, Stalled string
}

func progress(o *kubernetesv1.Object) progressOf {
	p := progressOf{Observed: o.Status.ObservedGeneration}
	if c := condition(o, common.TypeReconciling); c.Status == metav1.ConditionTrue {
		p.Reconciling = c.Reason
	}
	if c := condition(o, common.TypeStalled); c.Status == metav1.ConditionTrue {
		p.Stalled = c.Reason
	}
	return p
}

// TestProgress: a managed resource reads as kstatus expects after each outcome of an
// edit (generation 2 after generation 1 was applied): applied, stalled on what someone
// must fix, or in progress while a failure is retried.
func TestProgress(t *testing.T) {
	for name, tc := range map[string]struct {
		set  func(*fakeExternal)
		want progressOf
	}{
		"applied":           {func(*fakeExternal) {}, progressOf{Observed: 2}},
		"awaiting approval": {func(f *fakeExternal) { f.applyErr = resource.Holdf(common.ReasonAwaitingApproval, "approve plan x") }, progressOf{Observed: 2, Stalled: common.ReasonAwaitingApproval}},
		"refused": {func(f *fakeExternal) {
			f.applyErr = resource.Refusef(common.ReasonDestructiveChangeRefused, "it replaces")
		}, progressOf{Observed: 2, Stalled: common.ReasonDestructiveChangeRefused}},
		"bad input":        {func(f *fakeExternal) { f.connectErr = resource.UserErrorf("InvalidInput", "no") }, progressOf{Observed: 2, Stalled: "InvalidInput"}},
		"failing, retried": {func(f *fakeExternal) { f.applyErr = errors.New("boom") }, progressOf{Observed: 1, Reconciling: common.ReasonApplying}},
		"waiting":          {func(f *fakeExternal) { f.applyErr = resource.Waitf(common.ReasonStateLocked, "locked") }, progressOf{Observed: 1, Reconciling: common.ReasonApplying}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, true, nil)
			if _, o, err := h.reconcile(); err != nil || progress(o) != (progressOf{Observed: 1}) {
				t.Fatalf("first apply: err %v, progress %+v", err, progress(o))
			}
			h.edit()
			tc.set(h.ext)
			_, o, _ := h.reconcile()
			if diff := cmp.Diff(tc.want, progress(o)); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSlowApplyMarksReconciling: a kind whose applies are slow marks a new generation
// Reconciling with the apply's first progress report, and only then: an apply that ends
// before it reports goes from start to outcome in one status write, and a drift check of
// an applied generation marks nothing.
func TestSlowApplyMarksReconciling(t *testing.T) {
	for name, tc := range map[string]struct {
		slow, edit, reports bool
		want                string
	}{
		"slow, first create":               {true, false, true, common.ReasonApplying},
		"slow, first create, quick":        {true, false, false, ""},
		"slow, edit":                       {true, true, true, common.ReasonApplying},
		"slow, drift check":                {true, false, true, ""},
		"quick kind, first apply, reports": {false, false, true, ""},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, true, nil)
			h.r.kind.SlowApply = tc.slow
			if name == "slow, drift check" || tc.edit {
				h.reconcile() // generation 1 applied
				if tc.edit {
					h.edit()
				}
			}
			h.ext.reports = tc.reports
			seen := "not applied"
			var ready, synced metav1.Condition
			h.ext.onApply = func() {
				o := &kubernetesv1.Object{}
				if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "platform", Name: "obj"}, o); err != nil {
					t.Fatal(err)
				}
				seen = progress(o).Reconciling
				ready, synced = condition(o, common.TypeReady), condition(o, common.TypeSynced)
			}
			_, o, err := h.reconcile()
			if err != nil || seen != tc.want {
				t.Fatalf("err %v; during the apply, Reconciling = %q, want %q", err, seen, tc.want)
			}
			if !tc.reports && !tc.edit && ready.Type != "" {
				t.Errorf("a quick first create wrote a status before its outcome: Ready %+v", ready)
			}
			if tc.want != "" {
				// a first create shows READY False (Creating) and SYNCED True while it runs,
				// an edit the conditions it had
				want := []string{"False/Creating/1", "True/ReconcileSuccess/1"}
				if tc.edit {
					want = []string{"True/Available/1", "True/ReconcileSuccess/1"}
				}
				got := []string{fmt.Sprintf("%s/%s/%d", ready.Status, ready.Reason, ready.ObservedGeneration),
					fmt.Sprintf("%s/%s/%d", synced.Status, synced.Reason, synced.ObservedGeneration)}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Ready and Synced during the apply (-want +got):\n%s", diff)
				}
			}
			if p := progress(o); p.Reconciling != "" || p.Observed != o.Generation {
				t.Errorf("after the apply: %+v, want generation %d applied", p, o.Generation)
			}
		})
	}
}

// TestSettledCatchesUp: an edit that changes nothing external settles; the resource then
// reads as applied, even when it was marked Reconciling for the edit.
func TestSettledCatchesUp(t *testing.T) {
	h := newHarness(t, true, func(o *kubernetesv1.Object) {
		o.Generation = 2
		o.Status.ObservedGeneration = 1
		o.Status.Conditions = []metav1.Condition{
			{Type: common.TypeSynced, Status: metav1.ConditionTrue, Reason: common.ReasonReconcileSuccess, ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
			{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: common.ReasonAvailable, ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
			{Type: common.TypeReconciling, Status: metav1.ConditionTrue, Reason: common.ReasonApplying, ObservedGeneration: 2, LastTransitionTime: metav1.Now()}}
	})
	h.ext.obs = Observation{Settled: true}
	_, o, err := h.reconcile()
	if err != nil || progress(o) != (progressOf{Observed: 2}) {
		t.Errorf("err %v, progress %+v: want generation 2 applied", err, progress(o))
	}
}

// TestFirstReady: the time to ready is measured once per resource: when Ready turns True
// for the first time, not when a resource regains it.
func TestFirstReady(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason string, observed int64) *common.ManagedStatus {
		st := &common.ManagedStatus{ObservedGeneration: observed}
		if status != "" {
			st.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: status, Reason: reason}}
		}
		return st
	}
	nowReady := ready(metav1.ConditionTrue, common.ReasonAvailable, 1)
	for name, tc := range map[string]struct {
		keepsReady    bool
		before, after *common.ManagedStatus
		want          bool
	}{
		"first status, ready":                 {true, ready("", "", 0), nowReady, true},
		"created after Creating":              {true, ready(metav1.ConditionFalse, common.ReasonCreating, 1), nowReady, true},
		"still ready":                         {true, nowReady, nowReady, false},
		"not ready yet":                       {true, ready("", "", 0), ready(metav1.ConditionFalse, common.ReasonCreating, 0), false},
		"terraform, ready again after delete": {true, ready(metav1.ConditionFalse, common.ReasonDeleting, 1), nowReady, false},
		"native, first success after retries": {false, ready(metav1.ConditionFalse, common.ReasonReconcileError, 0), nowReady, true},
		"native, back after an outage":        {false, ready(metav1.ConditionFalse, common.ReasonClusterUnreachable, 3), nowReady, false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := (Kind{KeepsReady: tc.keepsReady}).firstReady(tc.before, tc.after); got != tc.want {
				t.Errorf("firstReady = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStaleCopyPutsBackNoConditions: a reconcile that read a copy older than the last
// status write (a lagging cache) must not write that copy's conditions back: the guarded
// write (the mark of its first progress report, or its one status write when the apply
// ends before one) loses, and the Ready the last apply set stands. The apply of a
// generation already applied changes nothing.
func TestStaleCopyPutsBackNoConditions(t *testing.T) {
	for name, reports := range map[string]bool{"quick apply": false, "apply that reports": true} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, true, nil)
			h.r.kind.SlowApply = true
			key := client.ObjectKey{Namespace: "platform", Name: "obj"}
			_, o, err := h.reconcile()
			if err != nil || condition(o, common.TypeReady).Status != metav1.ConditionTrue {
				t.Fatalf("first apply: %v, Ready %+v", err, condition(o, common.TypeReady))
			}
			stale := o.DeepCopy() // as a lagging cache still shows it: before the apply's status write
			stale.ResourceVersion = "1"
			stale.Status.ObservedGeneration = 0
			stale.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionFalse, Reason: common.ReasonCreating, ObservedGeneration: 1}}
			lagging := interceptor.NewClient(h.c.(client.WithWatch), interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					stale.DeepCopyInto(obj.(*kubernetesv1.Object))
					return nil
				}})
			h.ext.reports = reports
			h.ext.applyErr = errors.New("the apply fails, so that Ready is kept as it was read")
			res, _ := New(lagging, h.r.kind).Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
			if err := h.c.Get(context.Background(), key, o); err != nil {
				t.Fatal(err)
			}
			if ready := condition(o, common.TypeReady); ready.Status != metav1.ConditionTrue {
				t.Errorf("after a reconcile from a stale copy: Ready %+v; want Ready kept", ready)
			}
			if res.RequeueAfter == 0 {
				t.Errorf("the reconcile that lost is not run again: %+v", res)
			}
		})
	}
}
