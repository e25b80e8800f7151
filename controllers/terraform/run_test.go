package terraform

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// scope is a run of the harness's Module, edited (spec and status), ready for one step.
func (h *harness) scope(edit func(*terraformv1.Module)) *run {
	h.t.Helper()
	if edit != nil {
		mg := h.get()
		edit(mg)
		status := mg.Status
		if err := h.c.Update(context.Background(), mg); err != nil {
			h.t.Fatal(err)
		}
		mg.Status = status
		if err := h.c.Status().Update(context.Background(), mg); err != nil {
			h.t.Fatal(err)
		}
	}
	mg := h.get()
	ws := &workspace.Rendered{Workspace: engine.Workspace{ID: string(mg.GetUID())}, Hash: h.render.hash}
	e := h.tf.newRun(mg, ws)
	e.out = outcome{ran: true}
	return e
}

var (
	applied = func(m *terraformv1.Module) { m.Status.Terraform.InputsHash = "h0"; m.Status.Terraform.Resources = 1 }
	manual  = func(m *terraformv1.Module) { applied(m); m.Spec.Approval = common.ApprovalManual }
)

// TestApplySteps: each step of Apply, on the fake runner: what it runs, what comes next,
// and what it leaves in the scope.
func TestApplySteps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edit   func(*terraformv1.Module)
		runner fakeRunner
		plan   *engine.Plan // the scope's plan, for the steps after plan
		step   func(*run, context.Context) (next, error)
		calls  string
		next   next
		reason string // of the error; empty: none
		check  func(*testing.T, *run)
	}{
		{name: "a first create with nothing to decide is one combined apply", step: (*run).createDirectly, calls: "create", next: finished,
			check: func(t *testing.T, e *run) {
				if e.out.applied == nil || !e.creates {
					t.Error("the create is not recorded as applied and as a create")
				}
			}},
		{name: "a resource that exists is not created directly", edit: applied, step: (*run).createDirectly, next: proceed},
		{name: "a manual first create is planned first", edit: func(m *terraformv1.Module) { m.Spec.Approval = common.ApprovalManual },
			step: (*run).createDirectly, next: proceed},
		{name: "a plan without changes ends the apply", edit: applied, step: (*run).makePlan, calls: "plan", next: finished},
		{name: "a plan with changes goes on", edit: applied, runner: fakeRunner{plans: []*engine.Plan{update}}, step: (*run).makePlan,
			calls: "plan", next: proceed, check: func(t *testing.T, e *run) {
				if e.plan == nil || e.plan.ID != update.ID {
					t.Errorf("plan %v, want %s", e.plan, update.ID)
				}
			}},
		{name: "a failed plan stops", edit: applied, runner: fakeRunner{planErrs: []error{errors.New("boom")}}, step: (*run).makePlan,
			calls: "plan", next: proceed, reason: "error"},
		{name: "an update is applied", edit: applied, plan: update, step: (*run).decide, next: proceed},
		{name: "manual approval holds the plan", edit: manual, plan: update, step: (*run).decide, next: finished, reason: common.ReasonAwaitingApproval},
		{name: "a refused replacement is held", edit: applied, plan: replace, step: (*run).decide, next: finished, reason: common.ReasonDestructiveChangeRefused},
		{name: "observe-only reports drift and applies nothing", edit: func(m *terraformv1.Module) {
			applied(m)
			m.Spec.ManagementPolicies = []common.ManagementAction{common.ManagementObserve}
		}, plan: update, step: (*run).decide, next: finished, check: func(t *testing.T, e *run) {
			if !e.out.drift {
				t.Error("drift not reported")
			}
		}},
		{name: "an apply goes on to keep the text", edit: applied, plan: update, step: (*run).apply, calls: "apply", next: proceed,
			check: func(t *testing.T, e *run) {
				if e.out.applied == nil {
					t.Error("the apply is not recorded")
				}
			}},
		{name: "a stale saved plan is planned again", edit: applied, plan: update, runner: fakeRunner{stale: 1}, step: (*run).apply,
			calls: "apply", next: replan, check: func(t *testing.T, e *run) {
				if !e.staleTried {
					t.Error("staleTried not set")
				}
			}},
		{name: "marking a create makes its apply a create's", step: (*run).markCreating, next: proceed, check: func(t *testing.T, e *run) {
			if !e.workspace().Creates || e.sit.pending {
				t.Error("the create's workspace is not a create's, or the resource was marked")
			}
		}},
		{name: "marking an update records nothing", edit: applied, step: (*run).markCreating, next: proceed, check: func(t *testing.T, e *run) {
			if e.sit.pending || e.workspace().Creates {
				t.Error("an update is recorded as a create")
			}
		}},
		{name: "nothing to recover without a pending create", edit: applied, step: (*run).recoverInterruptedCreate, next: proceed},
		{name: "a free state lock lets the apply go on", step: (*run).clearStaleLock, next: proceed},
		{name: "a class's resource that exists looks for provider upgrades, and a plan without changes keeps its lock", edit: func(m *terraformv1.Module) {
			applied(m)
			m.Spec.ClassRef = &common.ClassReference{Kind: "ModuleClass", Name: "pets"}
		}, runner: fakeRunner{lock: []byte("lock-a")}, step: (*run).makePlan, calls: "plan", next: finished, check: func(t *testing.T, e *run) {
			if opts := e.t.runner.(*fakeRunner).opts; len(opts) != 1 || !opts[0].LookForUpgrades {
				t.Errorf("plan options %+v, want it to look for provider upgrades", opts)
			}
			if string(e.out.lock) != "lock-a" {
				t.Errorf("lock %q, want the plan's", e.out.lock)
			}
		}},
		{name: "a resource whose lock is another than the one it ran with (a new revision's) counts the move from its own", edit: func(m *terraformv1.Module) {
			applied(m)
			m.Status.Terraform.ProviderLock = "lock-a"
		}, step: (*run).makePlan, calls: "plan", next: finished, check: func(t *testing.T, e *run) {
			if opts := e.t.runner.(*fakeRunner).opts; len(opts) != 1 || string(opts[0].LockedBefore) != "lock-a" || opts[0].LookForUpgrades {
				t.Errorf("plan options %+v, want the move counted from lock-a, and no look for upgrades without a class", opts)
			}
		}},
		{name: "a create is planned with its module's lock", edit: func(m *terraformv1.Module) { m.Spec.Approval = common.ApprovalManual },
			step: (*run).makePlan, calls: "plan", next: finished, check: func(t *testing.T, e *run) {
				if opts := e.t.runner.(*fakeRunner).opts; len(opts) != 1 || opts[0].LookForUpgrades {
					t.Errorf("plan options %+v, want no look for provider upgrades", opts)
				}
			}},
		{name: "so is a resource that may not be updated", edit: func(m *terraformv1.Module) {
			applied(m)
			m.Spec.ManagementPolicies = []common.ManagementAction{common.ManagementObserve}
		}, step: (*run).makePlan, calls: "plan", next: finished, check: func(t *testing.T, e *run) {
			if opts := e.t.runner.(*fakeRunner).opts; len(opts) != 1 || opts[0].LookForUpgrades {
				t.Errorf("plan options %+v, want no look for provider upgrades", opts)
			}
		}},
		{name: "a provider upgrade is held", edit: applied, plan: upgrade, step: (*run).decide, next: finished, reason: common.ReasonProviderUpgrade},
		{name: "an applied plan's lock is the resource's", edit: applied, plan: &engine.Plan{ID: "u", Changes: update.Changes, Lock: []byte("lock-b")},
			step: (*run).apply, calls: "apply", next: proceed, check: func(t *testing.T, e *run) {
				if string(e.out.lock) != "lock-b" {
					t.Errorf("lock %q, want the plan's", e.out.lock)
				}
			}},
		{name: "so is a failed one's: it may have written state", edit: applied, runner: fakeRunner{failing: errors.New("boom")},
			plan: &engine.Plan{ID: "u", Changes: update.Changes, Lock: []byte("lock-b")}, step: (*run).apply, calls: "apply", next: proceed, reason: "error",
			check: func(t *testing.T, e *run) {
				if string(e.out.lock) != "lock-b" {
					t.Errorf("lock %q, want the plan's", e.out.lock)
				}
			}},
		{name: "a direct create's lock is the resource's", runner: fakeRunner{lock: []byte("lock-c")}, step: (*run).createDirectly, calls: "create",
			next: finished, check: func(t *testing.T, e *run) {
				if string(e.out.lock) != "lock-c" {
					t.Errorf("lock %q, want the create's", e.out.lock)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			*h.runner = tc.runner
			e := h.scope(tc.edit)
			if tc.plan != nil {
				p := *tc.plan
				p.PriorResources = 1 // planned from the state the applied resource has
				e.plan = &p
			}
			n, err := tc.step(e, context.Background())
			if got := h.calls(); got != tc.calls {
				t.Errorf("ran %q, want %q", got, tc.calls)
			}
			if n != tc.next {
				t.Errorf("next = %v, want %v", n, tc.next)
			}
			switch {
			case tc.reason == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.reason == "error" && err == nil:
				t.Error("no error, want one")
			case tc.reason != "" && tc.reason != "error" && reasonOf(err) != tc.reason:
				t.Errorf("error %v (reason %q), want reason %q", err, reasonOf(err), tc.reason)
			}
			if tc.check != nil {
				tc.check(t, e)
			}
		})
	}
}

// reasonOf is the condition reason a typed error carries.
func reasonOf(err error) string {
	var held *resource.Held
	if errors.As(err, &held) {
		return held.Reason
	}
	if u, ok := resource.AsUserError(err); ok {
		return u.Reason
	}
	return ""
}

// TestApplyRetriesWithoutMissingImports: an interrupted create whose recovery imports
// find nothing for some addresses plans again without them, once per missing set.
func TestApplyRetriesWithoutMissingImports(t *testing.T) {
	h := newHarness(t, nil)
	missing := errors.New(`Error: Cannot import non-existent remote object

While attempting to import an existing object to "module.this.terraform_data.b", the provider detected that no object exists.`)
	h.runner.planErrs = []error{missing}
	h.runner.plans = []*engine.Plan{create}
	e := h.scope(applied)
	e.imports = []common.ImportInstruction{{Address: "terraform_data.a", ID: "a"}, {Address: "terraform_data.b", ID: "b"}}
	if _, err := runSteps(e, context.Background(), applySteps[3:]); err != nil {
		t.Fatal(err)
	}
	if got := h.calls(); got != "plan plan apply" {
		t.Errorf("ran %q, want a plan, a plan without the missing import, and an apply", got)
	}
	if len(e.imports) != 1 || e.imports[0].Address != "terraform_data.a" {
		t.Errorf("imports left %v, want only terraform_data.a", e.imports)
	}
}

// TestApplyStaleOnce: a saved plan that goes stale twice is planned again once, then fails.
func TestApplyStaleOnce(t *testing.T) {
	h := newHarness(t, nil)
	h.runner.stale = 2
	h.runner.plans = []*engine.Plan{update, update}
	e := h.scope(applied)
	_, err := runSteps(e, context.Background(), applySteps[3:])
	var stale *engine.StalePlanError
	if !errors.As(err, &stale) {
		t.Fatalf("err %v, want the second stale plan's error", err)
	}
	if got := h.calls(); got != "plan apply plan apply" {
		t.Errorf("ran %q", got)
	}
}

// TestStaleCreateRecordsNothing: a reconcile from a copy older than the last apply's
// status (the resource as stored records an apply) conflicts before terraform runs: it
// creates nothing and writes none of its stale status back.
func TestStaleCreateRecordsNothing(t *testing.T) {
	h := newHarness(t, nil)
	h.tf.reader = interceptor.NewClient(h.c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			if m, ok := obj.(*terraformv1.Module); ok { // applied since the copy the run read
				now := metav1.Now()
				m.Status.Terraform.LastApplyTime, m.Status.Terraform.Resources = &now, 1
			}
			return nil
		}})
	mg := h.reconcile()
	if got := h.calls(); got != "" {
		t.Errorf("ran %q, want nothing", got)
	}
	if tf := mg.Status.Terraform; tf.LastPlanTime != nil || tf.Plan != nil {
		t.Errorf("status.terraform written from a stale copy: %+v", tf)
	}
}
