package terraform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

func module(edit func(*terraformv1.Module)) *terraformv1.Module {
	m := &terraformv1.Module{}
	m.Name, m.Namespace = "net", "platform"
	m.SetGroupVersionKind(terraformv1.GroupVersion.WithKind("Module"))
	m.Status.Terraform.InputsHash = "applied-before" // exists: not a create
	if edit != nil {
		edit(m)
	}
	return m
}

var (
	update  = &engine.Plan{ID: "aaaa000000000001", Changes: []engine.Change{{Address: "terraform_data.a", Actions: []string{"update"}}}}
	replace = &engine.Plan{ID: "aaaa000000000002", Changes: []engine.Change{{Address: "terraform_data.a", Actions: []string{"delete", "create"}}}}
	create  = &engine.Plan{ID: "aaaa000000000003", Changes: []engine.Change{{Address: "terraform_data.a", Actions: []string{"create"}}}}
	imports = &engine.Plan{ID: "aaaa000000000004", Changes: []engine.Change{{Address: "terraform_data.a", Actions: []string{"no-op"}, Importing: true}}}
	moved   = []engine.ProviderChange{{Provider: "registry.terraform.io/hashicorp/random", From: "3.9.0", To: "3.10.0"}}
	upgrade = &engine.Plan{ID: "aaaa000000000005", ProviderChanges: moved}
	upNew   = &engine.Plan{ID: "aaaa000000000006", ProviderChanges: moved, Changes: create.Changes}
	// gone is the plan of a refresh that found both objects of the state deleted
	// outside Terraform: the refreshed state is empty, the stored one is not.
	gone = &engine.Plan{ID: "aaaa000000000007", Gone: []string{"terraform_data.a", "terraform_data.b"}, Changes: []engine.Change{
		{Address: "terraform_data.a", Actions: []string{"create"}}, {Address: "terraform_data.b", Actions: []string{"create"}}}}
)

func TestDecide(t *testing.T) {
	creating := func(m *terraformv1.Module) { m.Status.Terraform.InputsHash = "" }
	recorded := func(m *terraformv1.Module) { m.Status.Terraform.Resources = 2 }
	manual := func(m *terraformv1.Module) { m.Spec.Approval = common.ApprovalManual }
	moving := func(m *terraformv1.Module) { m.Spec.Revision, m.Status.Revision = "pets-2", "pets-1" }
	observe := func(m *terraformv1.Module) {
		m.Spec.ManagementPolicies = []common.ManagementAction{common.ManagementObserve}
	}
	type want struct {
		Verdict verdict
		Reason  string
		Warning bool
		Event   string
	}
	for _, tc := range []struct {
		name   string
		mg     *terraformv1.Module
		plan   *engine.Plan
		reason common.PlanReason
		want   want
	}{
		{"an update applies", module(nil), update, common.PlanUpdate, want{Verdict: applyPlan}},
		{"a plan from an empty state of a resource that recorded some is refused", module(recorded), create, common.PlanDrift,
			want{Verdict: holdPlan, Reason: common.ReasonStateMissing, Warning: true}},
		{"create-again lets it create again", module(func(m *terraformv1.Module) {
			recorded(m)
			m.Annotations = map[string]string{common.CreateAgainAnnotation: "true"}
		}), create, common.PlanDrift, want{Verdict: applyPlan}},
		{"so does approving it", module(func(m *terraformv1.Module) { recorded(m); m.Spec.ApprovedPlan = create.ID }), create, common.PlanDrift,
			want{Verdict: applyPlan}},
		{"adopting with imports is not refused", module(func(m *terraformv1.Module) {
			recorded(m)
			m.Spec.Imports = []common.ImportInstruction{{Address: "terraform_data.a", ID: "x"}}
		}), imports, common.PlanUpdate, want{Verdict: applyPlan}},
		{"objects the refresh found deleted outside terraform are drift, recreated", module(recorded), gone, common.PlanDrift,
			want{Verdict: applyPlan}},
		{"whatever the reason of the plan", module(recorded), gone, common.PlanUpdate, want{Verdict: applyPlan}},
		{"recreating them waits for approval as any change", module(func(m *terraformv1.Module) { recorded(m); manual(m) }), gone, common.PlanDrift,
			want{Verdict: holdPlan, Reason: common.ReasonAwaitingApproval, Event: EventPlanAwaitingApproval}},
		{"observe-only only reports them", module(func(m *terraformv1.Module) { recorded(m); observe(m) }), gone, common.PlanDrift,
			want{Verdict: observeOnly}},
		{"without Create in managementPolicies they are only reported", module(func(m *terraformv1.Module) {
			recorded(m)
			m.Spec.ManagementPolicies = []common.ManagementAction{common.ManagementObserve, common.ManagementUpdate, common.ManagementDelete}
		}), gone, common.PlanDrift, want{Verdict: observeOnly}},
		{"without Update too", module(func(m *terraformv1.Module) {
			recorded(m)
			m.Spec.ManagementPolicies = []common.ManagementAction{common.ManagementObserve, common.ManagementCreate}
		}), gone, common.PlanDrift, want{Verdict: observeOnly}},
		{"a plan from a state that holds resources is not", module(recorded),
			&engine.Plan{ID: "p", PriorResources: 1, Changes: create.Changes}, common.PlanUpdate, want{Verdict: applyPlan}},
		{"a replacement is refused by default", module(nil), replace, common.PlanUpdate,
			want{Verdict: holdPlan, Reason: common.ReasonDestructiveChangeRefused, Warning: true}},
		{"drift that replaces is refused too", module(nil), replace, common.PlanDrift,
			want{Verdict: holdPlan, Reason: common.ReasonDestructiveChangeRefused, Warning: true}},
		{"the refused plan's id approves it", module(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = replace.ID }), replace, common.PlanUpdate,
			want{Verdict: applyPlan}},
		{"another id does not", module(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = update.ID }), replace, common.PlanUpdate,
			want{Verdict: holdPlan, Reason: common.ReasonDestructiveChangeRefused, Warning: true}},
		{"replacing a harmless address is not destructive", module(nil),
			&engine.Plan{ID: "h", Changes: []engine.Change{{Address: "module.this.terraform_data.converge", Actions: []string{"delete", "create"}}}},
			common.PlanDrift, want{Verdict: applyPlan}},
		{"replacing a tainted object (a create that did not finish) is not destructive", module(nil),
			&engine.Plan{ID: "t", Changes: []engine.Change{{Address: "module.this.aws_eks_node_group.this", Actions: []string{"delete", "create"}, Tainted: true}}},
			common.PlanUpdate, want{Verdict: applyPlan}},
		{"deleting it is", module(nil),
			&engine.Plan{ID: "d", Changes: []engine.Change{{Address: "module.this.terraform_data.converge", Actions: []string{"delete"}}}},
			common.PlanUpdate, want{Verdict: holdPlan, Reason: common.ReasonDestructiveChangeRefused, Warning: true}},
		{"destructiveChanges Allow lets it through", module(func(m *terraformv1.Module) { m.Spec.DestructiveChanges = common.DestructiveAllow }),
			replace, common.PlanUpdate, want{Verdict: applyPlan}},
		{"the first create is never refused", module(creating), &engine.Plan{ID: "c", Changes: []engine.Change{{Address: "a", Actions: []string{"delete", "create"}}}},
			common.PlanCreate, want{Verdict: applyPlan}},
		{"manual approval holds a change", module(manual), update, common.PlanUpdate,
			want{Verdict: holdPlan, Reason: common.ReasonAwaitingApproval, Event: EventPlanAwaitingApproval}},
		{"manual approval holds a create", module(func(m *terraformv1.Module) { creating(m); manual(m) }), create, common.PlanCreate,
			want{Verdict: holdPlan, Reason: common.ReasonAwaitingApproval, Event: EventPlanAwaitingApproval}},
		{"an approved manual plan applies", module(func(m *terraformv1.Module) { manual(m); m.Spec.ApprovedPlan = update.ID }), update, common.PlanUpdate,
			want{Verdict: applyPlan}},
		{"observe-only leaves drift alone", module(observe), update, common.PlanDrift, want{Verdict: observeOnly}},
		{"observe-only leaves an update alone, approved or not", module(func(m *terraformv1.Module) { observe(m); m.Spec.ApprovedPlan = update.ID }),
			update, common.PlanUpdate, want{Verdict: observeOnly}},
		{"observe-only creates nothing", module(func(m *terraformv1.Module) { creating(m); observe(m) }), create, common.PlanCreate,
			want{Verdict: holdPlan, Reason: common.ReasonCreateNotAllowed}},
		{"observe-only may import", module(func(m *terraformv1.Module) { creating(m); observe(m) }), imports, common.PlanCreate,
			want{Verdict: applyPlan}},
		{"a provider upgrade waits for approval", module(nil), upgrade, common.PlanDrift,
			want{Verdict: holdPlan, Reason: common.ReasonProviderUpgrade, Event: common.ReasonProviderUpgrade}},
		{"with the resource's other changes", module(nil), upNew, common.PlanUpdate,
			want{Verdict: holdPlan, Reason: common.ReasonProviderUpgrade, Event: common.ReasonProviderUpgrade}},
		{"even where destructive changes are allowed", module(func(m *terraformv1.Module) { m.Spec.DestructiveChanges = common.DestructiveAllow }),
			upgrade, common.PlanDrift, want{Verdict: holdPlan, Reason: common.ReasonProviderUpgrade, Event: common.ReasonProviderUpgrade}},
		{"its id approves it", module(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = upgrade.ID }), upgrade, common.PlanDrift,
			want{Verdict: applyPlan}},
		{"a create has no provider to upgrade", module(creating), upNew, common.PlanCreate, want{Verdict: applyPlan}},
		{"a new class revision's provider versions roll out with it", module(moving), upNew, common.PlanUpdate, want{Verdict: applyPlan}},
		{"where the class asks for approval, they wait for it", module(func(m *terraformv1.Module) { moving(m); manual(m) }), upgrade, common.PlanUpdate,
			want{Verdict: holdPlan, Reason: common.ReasonAwaitingApproval, Event: EventPlanAwaitingApproval}},
		{"at the revision it runs, a move still waits", module(func(m *terraformv1.Module) { moving(m); m.Status.Revision = m.Spec.Revision }), upgrade, common.PlanDrift,
			want{Verdict: holdPlan, Reason: common.ReasonProviderUpgrade, Event: common.ReasonProviderUpgrade}},
		{"adopting by imports may not destroy", module(func(m *terraformv1.Module) {
			creating(m)
			m.Spec.Imports = []common.ImportInstruction{{Address: "terraform_data.a", ID: "x"}}
		}), replace, common.PlanCreate, want{Verdict: holdPlan, Reason: common.ReasonAdoptionRefused, Warning: true}},
		{"adopting migrated state may not change anything", module(func(m *terraformv1.Module) {
			creating(m)
			m.Annotations = map[string]string{common.AdoptedAnnotation: "true"}
		}), update, common.PlanCreate, want{Verdict: holdPlan, Reason: common.ReasonAdoptionRefused, Warning: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := decide(situationFor(tc.mg, tc.reason, "terraform_data.converge"), tc.mg, tc.plan)
			got := want{Verdict: v}
			if h, ok := err.(*resource.Held); ok {
				got.Reason, got.Warning, got.Event = h.Reason, h.Warning, h.Event
				if !strings.Contains(h.Message, tc.plan.ID) {
					t.Errorf("message %q does not name plan %s", h.Message, tc.plan.ID)
				}
				if h.Reason == common.ReasonProviderUpgrade && !strings.Contains(h.Message, "hashicorp/random 3.9.0 -> 3.10.0") {
					t.Errorf("message %q does not name the provider's move", h.Message)
				}
			} else if err != nil {
				t.Fatalf("decide: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApprovalOfAnOlderPlanSaysSo(t *testing.T) {
	mg := module(func(m *terraformv1.Module) {
		m.Spec.Approval = common.ApprovalManual
		m.Spec.ApprovedPlan = "0000000000000000"
	})
	_, err := decide(situationFor(mg, common.PlanUpdate), mg, update)
	if err == nil || !strings.Contains(err.Error(), "spec.approvedPlan 0000000000000000 is not the pending plan, so nothing was applied") {
		t.Errorf("err = %v", err)
	}
}

func TestRefusalOfADestructivePlanNamesAnOlderApproval(t *testing.T) {
	for _, tc := range []struct {
		name     string
		approved string
		want     bool
	}{
		{"no approval", "", false},
		{"an older plan approved", update.ID, true},
		{"the plan applied last approved: history, not an error", "aaaa00000000000f", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mg := module(func(m *terraformv1.Module) {
				m.Spec.ApprovedPlan = tc.approved
				m.Status.Terraform.LastApply = &common.ApplySummary{ID: "aaaa00000000000f"}
			})
			_, err := decide(situationFor(mg, common.PlanUpdate), mg, replace)
			h, ok := err.(*resource.Held)
			if !ok || h.Reason != common.ReasonDestructiveChangeRefused {
				t.Fatalf("err = %v, want a DestructiveChangeRefused hold", err)
			}
			says := strings.HasPrefix(h.Message, "spec.approvedPlan ")
			if diff := cmp.Diff(tc.want, says); diff != "" {
				t.Errorf("message names the older approval (-want +got):\n%s\nmessage: %s", diff, h.Message)
			}
		})
	}
}

func TestRefusalListsAddresses(t *testing.T) {
	_, err := decide(situationFor(module(nil), common.PlanUpdate), module(nil), replace)
	if err == nil || !strings.Contains(err.Error(), "\n  terraform_data.a: delete, create\n") || !strings.Contains(err.Error(), "terraplane approve module/net -n platform") {
		t.Errorf("err = %v", err)
	}
}

// situationFor is where mg stands, with a plan made for reason and harmless replacements.
func situationFor(mg resource.Managed, reason common.PlanReason, harmless ...string) situation {
	s := situate(mg, facts{harmless: harmless})
	s.reason = reason
	return s
}
