package terraform

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestSituate: where a resource stands, read once from its status, spec and annotations,
// and why a run is due.
func TestSituate(t *testing.T) {
	now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	planned := func(ago time.Duration) func(*terraformv1.Module) {
		return func(m *terraformv1.Module) {
			at := metav1.NewTime(now.Add(-ago))
			m.Status.Terraform.LastPlanTime, m.Status.Terraform.LastApplyTime, m.Status.Terraform.InputsHash = &at, &at, "h"
			resource.SetCondition(&m.Status.Conditions, 1, common.TypeSynced, metav1.ConditionTrue, common.ReasonReconcileSuccess, "")
			resource.SetCondition(&m.Status.Conditions, 1, common.TypeReady, metav1.ConditionTrue, common.ReasonAvailable, "")
		}
	}
	held := func(hash string) func(*terraformv1.Module) {
		return func(m *terraformv1.Module) {
			planned(time.Minute)(m)
			m.Status.Terraform.Plan = &common.PlanSummary{ID: "p1", InputsHash: hash}
			resource.SetCondition(&m.Status.Conditions, 1, common.TypeSynced, metav1.ConditionFalse, common.ReasonAwaitingApproval, "")
		}
	}
	and := func(edits ...func(*terraformv1.Module)) func(*terraformv1.Module) {
		return func(m *terraformv1.Module) {
			for _, e := range edits {
				e(m)
			}
		}
	}
	type want struct {
		Creating, Pending, Adopting, Abandoned, Held, Approved bool
		Reason                                                 common.PlanReason
		Due                                                    dueReason
	}
	for _, tc := range []struct {
		name string
		edit func(*terraformv1.Module)
		want want
	}{
		{"never planned: a create, due", nil, want{Creating: true, Reason: common.PlanCreate, Due: dueNeverPlanned}},
		{"a create recorded in flight", func(m *terraformv1.Module) {
			m.Annotations = map[string]string{common.CreatePendingAnnotation: "2026-12-02T05:00:00Z"}
		}, want{Creating: true, Pending: true, Reason: common.PlanCreate, Due: dueNeverPlanned}},
		{"adopting by imports", func(m *terraformv1.Module) {
			m.Spec.Imports = []common.ImportInstruction{{Address: "terraform_data.a", ID: "a"}}
		}, want{Creating: true, Adopting: true, Reason: common.PlanCreate, Due: dueNeverPlanned}},
		{"abandoned", func(m *terraformv1.Module) { m.Annotations = map[string]string{common.AbandonAnnotation: "true"} },
			want{Creating: true, Abandoned: true, Reason: common.PlanCreate, Due: dueNeverPlanned}},
		{"settled, planned a minute ago: not due", planned(time.Minute), want{Reason: common.PlanDrift, Due: dueNot}},
		{"settled, planned two hours ago: a drift check", planned(2 * time.Hour), want{Reason: common.PlanDrift, Due: dueDriftCheck}},
		{"a plan requested", and(planned(time.Minute), func(m *terraformv1.Module) {
			m.Annotations = map[string]string{common.RequestedAtAnnotation: "t1"}
		}), want{Reason: common.PlanDrift, Due: dueRequested}},
		{"a plan requested and answered", and(planned(time.Minute), func(m *terraformv1.Module) {
			m.Annotations = map[string]string{common.RequestedAtAnnotation: "t1"}
			m.Status.Terraform.LastHandledRequest = "t1"
		}), want{Reason: common.PlanDrift, Due: dueNot}},
		{"the inputs changed: an update", and(planned(time.Minute), func(m *terraformv1.Module) { m.Status.Terraform.InputsHash = "h0" }),
			want{Reason: common.PlanUpdate, Due: dueInputs}},
		{"another class revision", and(planned(time.Minute), func(m *terraformv1.Module) { m.Spec.Revision = "r2" }),
			want{Reason: common.PlanDrift, Due: dueRevision}},
		{"the last run failed", and(planned(time.Minute), func(m *terraformv1.Module) {
			resource.SetCondition(&m.Status.Conditions, 1, common.TypeSynced, metav1.ConditionFalse, common.ReasonReconcileError, "")
		}), want{Reason: common.PlanDrift, Due: dueUnsettled}},
		{"a held plan waits", held("h"), want{Held: true, Reason: common.PlanDrift, Due: dueNot}},
		{"a held plan approved", and(held("h"), func(m *terraformv1.Module) { m.Spec.ApprovedPlan = "p1" }),
			want{Held: true, Approved: true, Reason: common.PlanDrift, Due: dueApproved}},
		{"a held plan of other inputs", held("h0"), want{Held: true, Reason: common.PlanDrift, Due: dueHeldStale}},
		{"an approval of a held plan of other inputs approves nothing", and(held("h0"), func(m *terraformv1.Module) { m.Spec.ApprovedPlan = "p1" }),
			want{Held: true, Reason: common.PlanDrift, Due: dueApproved}},
		{"the spec edited while a plan is held", and(held("h"), func(m *terraformv1.Module) { m.Generation = 2 }),
			want{Held: true, Reason: common.PlanDrift, Due: dueHeldEdited}},
		{"a plan applied is held no more", and(held("h"), func(m *terraformv1.Module) {
			m.Status.Terraform.LastApply = &common.ApplySummary{ID: "p1"}
		}), want{Reason: common.PlanDrift, Due: dueUnsettled}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
			if tc.edit != nil {
				tc.edit(m)
			}
			s := situate(m, facts{hash: "h", driftInterval: time.Hour, now: now})
			got := want{Creating: s.creating, Pending: s.pending, Adopting: s.adopting, Abandoned: s.abandoned, Held: s.held != nil,
				Approved: s.approved, Reason: s.reason, Due: s.due}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("situation (-want +got):\n%s", d)
			}
			if s.due == dueNot && (s.wait <= 0 || s.wait > time.Hour+time.Hour/10) {
				t.Errorf("next look in %s, want within the drift interval and its jitter", s.wait)
			}
		})
	}
}

// TestSituationRules: the rules derived from a situation, for each kind of resource.
func TestSituationRules(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		edit                    func(*terraformv1.Module)
		direct, upgrades, empty bool
	}{
		{"a first create, automatic", nil, true, false, false},
		{"a first create, manual", func(m *terraformv1.Module) { m.Spec.Approval = common.ApprovalManual }, false, false, false},
		{"a first create, approved in advance", func(m *terraformv1.Module) { m.Spec.ApprovedPlan = "p" }, false, false, false},
		{"a first create that adopts", func(m *terraformv1.Module) {
			m.Spec.Imports = []common.ImportInstruction{{Address: "a.b", ID: "x"}}
		}, false, false, true},
		{"observe only", func(m *terraformv1.Module) {
			m.Spec.ManagementPolicies = []common.ManagementAction{common.ManagementObserve}
		}, false, false, false},
		{"an update without a class", func(m *terraformv1.Module) { m.Status.Terraform.InputsHash = "h0" }, false, false, false},
		{"an update of a class's resource", func(m *terraformv1.Module) {
			m.Status.Terraform.InputsHash = "h0"
			m.Spec.ClassRef = &common.ClassReference{Kind: "ModuleClass", Name: "pets"}
		}, false, true, false},
		{"an update that may not update", func(m *terraformv1.Module) {
			m.Status.Terraform.InputsHash = "h0"
			m.Spec.ClassRef = &common.ClassReference{Kind: "ModuleClass", Name: "pets"}
			m.Spec.ManagementPolicies = []common.ManagementAction{common.ManagementObserve}
		}, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &terraformv1.Module{}
			if tc.edit != nil {
				tc.edit(m)
			}
			s := situate(m, facts{hash: "h", driftInterval: time.Hour, now: time.Now()})
			if got := s.createsDirectly(m); got != tc.direct {
				t.Errorf("creates directly = %v, want %v", got, tc.direct)
			}
			if got := s.looksForUpgrades(m); got != tc.upgrades {
				t.Errorf("looks for upgrades = %v, want %v", got, tc.upgrades)
			}
			if got := s.destroysNothing(); got != tc.empty {
				t.Errorf("destroys nothing = %v, want %v", got, tc.empty)
			}
		})
	}
}

// TestOnlyChecksDrift: a plan may be answered by a reread only when it checks for drift
// and nothing else.
func TestOnlyChecksDrift(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*terraformv1.Module)
		hash string // the inputs as rendered now
		want bool
	}{
		{name: "the drift interval passed", hash: "h1", want: true},
		{name: "a check was requested", hash: "h1", want: true, edit: func(m *terraformv1.Module) {
			m.Status.Terraform.LastPlanTime = &metav1.Time{Time: time.Now()}
			m.Annotations = map[string]string{common.RequestedAtAnnotation: "now"}
		}},
		{name: "the inputs changed", hash: "h2"},
		{name: "the last run failed", hash: "h1", edit: func(m *terraformv1.Module) {
			m.Status.Conditions[1].Status = metav1.ConditionFalse
		}},
		{name: "a check was requested after a failed run", hash: "h1", edit: func(m *terraformv1.Module) {
			m.Status.Conditions[1].Status = metav1.ConditionFalse
			m.Annotations = map[string]string{common.RequestedAtAnnotation: "now"}
		}},
		{name: "a plan is held", hash: "h1", edit: func(m *terraformv1.Module) {
			m.Status.Terraform.Plan = &common.PlanSummary{ID: "p1"}
			m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: common.TypeDrifted, Status: metav1.ConditionTrue})
		}},
		{name: "the class revision moves", hash: "h1", edit: func(m *terraformv1.Module) { m.Spec.Revision = "pets-2" }},
		{name: "not due yet", hash: "h1", edit: func(m *terraformv1.Module) {
			m.Status.Terraform.LastPlanTime = &metav1.Time{Time: time.Now()}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &terraformv1.Module{}
			existingModule(m)
			if tc.edit != nil {
				tc.edit(m)
			}
			s := situate(m, facts{hash: tc.hash, driftInterval: time.Hour, now: time.Now()})
			if got := s.onlyChecksDrift(m); got != tc.want {
				t.Errorf("only checks drift = %v, want %v (due: %q)", got, tc.want, s.due)
			}
		})
	}
}
