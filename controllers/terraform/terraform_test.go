package terraform

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/planpolicy"
	"terraplane.io/terraplane/internal/planstore"
	"terraplane.io/terraplane/internal/plugins"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/statelock"
	"terraplane.io/terraplane/internal/workspace"
)

// fakeRunner plays terraform: it answers Plan with the next planned plan and records
// every call.
type fakeRunner struct {
	plans   []*engine.Plan // answered in turn by Plan
	stale   int            // ApplyPlan calls that fail as stale before one succeeds
	calls   []string
	applied []*engine.Plan
	state   string // answered by PullState
	failing error  // returned by Create and ApplyPlan, when set
	// emptyState makes plans come from an empty state, as when the state Secret is lost.
	emptyState bool
	// planErrs are returned by Plan in turn, before its plans.
	planErrs []error
	// locker judges and takes state locks, when set, in the Leases of client.
	locker *statelock.Locker
	client client.Client
	// opts are the options Plan was called with, in turn.
	opts []engine.PlanOptions
	// lock is the dependency lock Create and plans without changes ran with.
	lock []byte
	// targets are the addresses the last plan was limited to.
	targets []string
	// lockReads counts ClearStaleLock calls: reads of the state lock.
	lockReads int
	// onApply runs as ApplyPlan starts, when set.
	onApply func()
	// planned are the creates a checked create plans (engine.Workspace.Check).
	planned []plugins.PlannedCreate
	// onCreate runs as Create starts, when set; activity is what Activity answers.
	onCreate func()
	activity engine.Activity
	// creates records, for each Create and ApplyPlan, whether it ran as a create's
	// (engine.Workspace.Creates).
	creates []bool
}

// locked runs apply under the workspace's state lock as the engine takes it, when the
// runner has a locker: a create's lock records the create, and keeps the record when
// the apply's outcome is unknown.
func (f *fakeRunner) locked(ws engine.Workspace, apply func() (engine.Result, error)) (engine.Result, error) {
	f.creates = append(f.creates, ws.Creates)
	if f.locker == nil {
		return apply()
	}
	ctx, key := context.Background(), statelock.LeaseKey(ws.BackendConfig["namespace"], ws.BackendConfig["secret_suffix"])
	// With its Lease there, the locker seeds no state: this terraform writes none.
	if err := f.client.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return engine.Result{}, err
	}
	unlock, _, err := f.locker.LockState(ctx, ws.BackendConfig, "apply", ws.Creates)
	if err != nil {
		return engine.Result{}, err
	}
	res, err := apply()
	unlock(!engine.OutcomeUnknown(err), nil)
	return res, err
}

func (f *fakeRunner) Create(_ context.Context, ws engine.Workspace) (engine.Result, error) {
	return f.locked(ws, func() (engine.Result, error) {
		if f.onCreate != nil {
			f.onCreate()
		}
		var checked json.RawMessage
		if ws.Check != nil {
			// The engine's check, on what the create plans (planned).
			f.calls = append(f.calls, "checked-create")
			report, pass, err := (&planpolicy.Cache{}).CheckCreate(context.Background(), ws.Check, f.planned, nil)
			if err != nil || !pass {
				return engine.Result{}, &engine.CreateRefusedError{Reason: "its plan did not pass every rule"}
			}
			checked = report
		} else {
			f.calls = append(f.calls, "create")
		}
		if f.failing != nil {
			return engine.Result{}, f.failing
		}
		return engine.Result{Changes: []engine.Change{{Address: "terraform_data.a", Actions: []string{"create"}}}, Resources: 1,
			Outputs: map[string]engine.Output{"id": {Value: []byte(`"a"`)}}, Lock: f.lock, Checked: checked}, nil
	})
}

func (f *fakeRunner) Plan(_ context.Context, _ engine.Workspace, opts engine.PlanOptions) (*engine.Plan, error) {
	f.calls, f.targets = append(f.calls, "plan"), opts.Targets
	f.opts = append(f.opts, opts)
	if len(f.planErrs) > 0 {
		err := f.planErrs[0]
		f.planErrs = f.planErrs[1:]
		return nil, err
	}
	if len(f.plans) == 0 {
		return &engine.Plan{Resources: -1, Lock: f.lock}, nil
	}
	p := *f.plans[0]
	f.plans = f.plans[1:]
	if p.PriorResources == 0 && !f.emptyState {
		p.PriorResources = 1 // planned from a state that holds what was created
	}
	return &p, nil
}

func (f *fakeRunner) ApplyPlan(_ context.Context, ws engine.Workspace, p *engine.Plan) (engine.Result, error) {
	return f.locked(ws, func() (engine.Result, error) {
		f.calls = append(f.calls, "apply")
		if f.onApply != nil {
			f.onApply()
		}
		if f.failing != nil {
			return engine.Result{}, f.failing
		}
		if f.stale > 0 {
			f.stale--
			return engine.Result{}, &engine.StalePlanError{}
		}
		f.applied = append(f.applied, p)
		return engine.Result{Changes: p.Changes, Resources: p.Resources, Outputs: map[string]engine.Output{}, Lock: p.Lock}, nil
	})
}

func (f *fakeRunner) Outputs(context.Context, engine.Workspace) (map[string]engine.Output, error) {
	return nil, nil
}
func (f *fakeRunner) Destroy(context.Context, engine.Workspace) error {
	f.calls = append(f.calls, "destroy")
	return nil
}
func (f *fakeRunner) PullState(context.Context, engine.Workspace) (string, error) {
	return f.state, nil
}
func (f *fakeRunner) Remove(context.Context, engine.Workspace) error { return nil }

// Activity answers what the test set.
func (f *fakeRunner) Activity(context.Context, engine.Workspace) (engine.Activity, error) {
	return f.activity, nil
}

// ClearStaleLock judges the workspace's lock with a real locker over the fake client;
// without one there is never a lock.
func (f *fakeRunner) ClearStaleLock(ctx context.Context, ws engine.Workspace, recorded bool) (statelock.Released, error) {
	f.lockReads++
	if f.locker == nil {
		return statelock.Released{}, nil
	}
	return f.locker.ClearStale(ctx, statelock.LeaseKey(ws.BackendConfig["namespace"], ws.BackendConfig["secret_suffix"]), false, recorded)
}

// fakeRenderer renders every resource to a workspace whose inputs hash is hash, or fails
// with err.
type fakeRenderer struct {
	hash  string
	err   error             // returned instead of a workspace, when set
	files map[string][]byte // the workspace's files
}

func (f *fakeRenderer) Render(_ context.Context, mg resource.Managed) (*workspace.Rendered, error) {
	if f.err != nil {
		return nil, f.err
	}
	ws := workspace.Ref(mg)
	ws.Files = f.files
	return &workspace.Rendered{Workspace: ws, Hash: f.hash, Provider: &registry.ProviderConfig{}}, nil
}

// harness is a managed reconciler of Modules over a fake client, runner and renderer.
type harness struct {
	t      *testing.T
	r      *managed.Reconciler
	tf     *connector
	c      client.Client
	runner *fakeRunner
	render *fakeRenderer
	events *events.FakeRecorder
}

func newHarness(t *testing.T, edit func(*terraformv1.Module)) *harness {
	t.Helper()
	scheme := kinds.NewScheme()
	mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "platform", UID: "u-1", Generation: 1,
		Finalizers: []string{resource.Finalizer}}}
	if edit != nil {
		edit(mg)
	}
	kind, _ := kinds.NewRegistry(nil).Managed(terraformv1.GroupVersion.WithKind("Module"))
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(mg).WithStatusSubresource(mg).
		WithIndex(&terraformv1.Module{}, watchIndex, watchKeys(kind)).Build()
	h := &harness{t: t, c: c, runner: &fakeRunner{}, render: &fakeRenderer{hash: "h1"}, events: events.NewFakeRecorder(100)}
	h.tf = &connector{client: c, kind: kind, render: h.render, runner: h.runner, reader: c, plans: planstore.New(c, c),
		opts: Options{DriftInterval: time.Hour, UserErrorRetry: time.Minute}, recorder: resource.RecorderFor(h.events)}
	h.runner.locker, h.runner.client = statelock.NewLocker(c, c, time.Hour, time.Minute), c
	h.r = managed.New(c, h.tf.managedKind())
	return h
}

// reconcile runs one reconcile and returns the module as it is afterwards.
func (h *harness) reconcile() *terraformv1.Module {
	h.t.Helper()
	if _, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "platform", Name: "net"}}); err != nil {
		h.t.Fatalf("reconcile: %v", err)
	}
	return h.get()
}

func (h *harness) get() *terraformv1.Module {
	h.t.Helper()
	mg := &terraformv1.Module{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "platform", Name: "net"}, mg); err != nil {
		h.t.Fatal(err)
	}
	return mg
}

// edit changes the module's spec as a user would, bumping its generation.
func (h *harness) edit(fn func(*terraformv1.Module)) {
	h.t.Helper()
	mg := h.get()
	fn(mg)
	mg.Generation++
	if err := h.c.Update(context.Background(), mg); err != nil {
		h.t.Fatal(err)
	}
}

// keepPlanText makes the Plan hold text, as after an apply.
func (h *harness) keepPlanText(text string) {
	h.t.Helper()
	applied := &engine.Plan{ID: "aaaa0000000000ff", Text: text}
	if err := h.tf.plans.KeepText(context.Background(), h.get(), applied, common.PlanUpdate, "h1"); err != nil {
		h.t.Fatal(err)
	}
}

// planText returns the text the Plan of the module holds, and the id of its plan; ""
// when there is no Plan.
func (h *harness) planText() (text, id string) {
	h.t.Helper()
	p := &terraformv1.Plan{}
	err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "platform", Name: resource.PlanName(&metav1.ObjectMeta{UID: "u-1"})}, p)
	if apierrors.IsNotFound(err) {
		return "", ""
	}
	if err != nil {
		h.t.Fatal(err)
	}
	if p.ResourceRef.Kind != "Module" || p.ResourceRef.Name != "net" || len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != "u-1" {
		h.t.Errorf("Plan %s names %+v, owners %+v; want Module net, owned by it", p.Name, p.ResourceRef, p.OwnerReferences)
	}
	return p.Text, p.Summary.ID
}

// planSecret returns the plan Secret's data as strings; nil when there is no Secret.
func (h *harness) planSecret() map[string]string {
	h.t.Helper()
	sec := &corev1.Secret{}
	err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "platform", Name: resource.PlanSecretName(&metav1.ObjectMeta{UID: "u-1"})}, sec)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range sec.Data {
		out[k] = string(v)
	}
	return out
}

// savedFile returns the file of the saved plan; "" when none is kept.
func (h *harness) savedFile() string {
	h.t.Helper()
	p, _, err := h.tf.plans.Load(context.Background(), h.get())
	if err != nil {
		h.t.Fatal(err)
	}
	if p == nil {
		return ""
	}
	return string(p.File)
}

// drain returns the events sent so far.
func (h *harness) drain() []string {
	var out []string
	for {
		select {
		case e := <-h.events.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func (h *harness) calls() string {
	s := strings.Join(h.runner.calls, " ")
	h.runner.calls = nil
	return s
}

func synced(mg resource.Managed) metav1.Condition {
	if c := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func hasEvent(evs []string, prefix string) bool {
	for _, e := range evs {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

// TestReplacementRefusedThenApproved walks a resource through a create, a refused
// replacement (kept, not re-planned while nothing changes) and its approval, which
// applies the saved plan itself.
func TestReplacementRefusedThenApproved(t *testing.T) {
	h := newHarness(t, nil)
	mg := h.reconcile()
	if got := h.calls(); got != "create" {
		t.Fatalf("first reconcile ran %q, want one combined create", got)
	}
	tf := mg.Status.Terraform
	if tf.LastApply == nil || tf.Plan == nil || tf.LastApply.ID != tf.Plan.ID || tf.LastApply.Add != 1 || tf.Resources != 1 || tf.Plan.Reason != common.PlanCreate {
		t.Fatalf("after create: %+v", tf)
	}
	if !hasEvent(h.drain(), "Normal Applied applied plan "+tf.Plan.ID+" (+1 ~0 -0") {
		t.Error("no Applied event for the create")
	}
	if h.reconcile(); h.calls() != "" {
		t.Fatal("a settled resource ran terraform again before the drift interval")
	}

	h.render.hash = "h2"
	h.runner.plans = []*engine.Plan{replace}
	replace.File, replace.Text = []byte("saved-plan"), "the plan text"
	mg = h.reconcile()
	if got := h.calls(); got != "plan" {
		t.Fatalf("an edit ran %q, want a plan only", got)
	}
	if s := synced(mg); s.Reason != common.ReasonDestructiveChangeRefused || !strings.Contains(s.Message, "terraform_data.a: delete, create") {
		t.Fatalf("Synced = %+v", s)
	}
	if p := mg.Status.Terraform.Plan; p.ID != replace.ID || p.Replace != 1 || p.Reason != common.PlanUpdate || p.InputsHash != "h2" {
		t.Errorf("status plan = %+v", p)
	}
	if evs := h.drain(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning DestructiveChangeRefused") {
		t.Errorf("events = %v, want one Warning", evs)
	}
	if got := h.savedFile(); got != "saved-plan" {
		t.Fatalf("the refused plan was not kept: %q", got)
	}
	if text, id := h.planText(); text != "the plan text" || id != replace.ID {
		t.Errorf("Plan holds %q of plan %s, want the refused plan's text", text, id)
	}
	if _, inSecret := h.planSecret()[resource.PlanTextKey]; inSecret {
		t.Error("the plan's text is in the Secret of the saved plan: reviewers would need to read Secrets")
	}
	if h.reconcile(); h.calls() != "" {
		t.Fatal("a held plan was planned again with nothing changed")
	}

	h.edit(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = replace.ID })
	mg = h.reconcile()
	if got := h.calls(); got != "apply" || len(h.runner.applied) != 1 || string(h.runner.applied[0].File) != "saved-plan" {
		t.Fatalf("approval ran %q and applied %v, want the saved plan applied without a new plan", got, h.runner.applied)
	}
	if s := synced(mg); s.Status != metav1.ConditionTrue || mg.Status.Terraform.LastApply.ID != replace.ID || mg.Status.Terraform.InputsHash != "h2" {
		t.Errorf("after approval: Synced %+v, lastApply %+v", s, mg.Status.Terraform.LastApply)
	}
	if text, id := h.planText(); text != "the plan text" || id != replace.ID || h.planSecret() != nil || h.savedFile() != "" {
		t.Errorf("after the apply: Plan text %q of %s, plan Secret %v; want the saved plan gone and its text kept", text, id, h.planSecret())
	}
}

// TestRevertedEditDropsTheSavedPlan: a refused plan's saved file, which holds secret
// values, goes when a later plan has no changes; its text stays for plan show.
func TestRevertedEditDropsTheSavedPlan(t *testing.T) {
	h := newHarness(t, nil)
	h.reconcile()
	h.render.hash = "h2"
	held := *replace
	held.File, held.Text = []byte("saved-plan"), "the refused plan"
	h.runner.plans = []*engine.Plan{&held}
	if s := synced(h.reconcile()); s.Reason != common.ReasonDestructiveChangeRefused {
		t.Fatalf("Synced = %+v", s)
	}
	h.calls()

	h.render.hash = "h1" // the edit is reverted: the next plan has no changes
	mg := h.reconcile()
	if got := h.calls(); got != "plan" {
		t.Fatalf("ran %q, want a plan only", got)
	}
	if s := synced(mg); s.Status != metav1.ConditionTrue {
		t.Errorf("Synced = %+v", s)
	}
	if text, _ := h.planText(); text != "the refused plan" || h.planSecret() != nil {
		t.Errorf("Plan text %q, plan Secret %v; want the saved plan gone and its text kept", text, h.planSecret())
	}
}

// TestDeleteRemovesTheSavedPlan: deleting destroys what the state holds (no terraform
// when it holds nothing) unless the reclaim or management policies, or the abandon
// annotation, keep it; the saved plan goes in every case.
func TestDeleteRemovesTheSavedPlan(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(*terraformv1.Module)
		state     string
		wantCalls string
		wantState bool
		wantEvent string
	}{
		{"Delete destroys", func(*terraformv1.Module) {}, oneResourceState, "destroy", false, "Normal Destroyed terraform destroyed the 1 resource(s) in state"},
		{"an empty state needs no terraform", func(*terraformv1.Module) {}, `{"version":4,"resources":[]}`, "", false, "Normal Destroyed the Terraform state holds no resources"},
		{"Retain keeps the state", func(m *terraformv1.Module) { m.Spec.ReclaimPolicy = common.ReclaimRetain }, oneResourceState, "", true, ""},
		{"managementPolicies without Delete keep the state", func(m *terraformv1.Module) {
			m.Spec.ManagementPolicies = []common.ManagementAction{common.ManagementObserve, common.ManagementCreate, common.ManagementUpdate}
		}, oneResourceState, "", true, ""},
		{"abandoned keeps the state", func(m *terraformv1.Module) {
			m.Annotations = map[string]string{common.AbandonAnnotation: "true"}
		}, oneResourceState, "", true, "Normal Abandoned released without destroying"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.edit)
			h.reconcile()
			h.keepPlanText("the plan")
			h.drain()
			ctx := context.Background()
			state := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: resource.StateSecretName(h.get()), Namespace: "platform"},
				Data: map[string][]byte{"tfstate": gzipped(t, tc.state)}}
			if err := h.c.Create(ctx, state); err != nil {
				t.Fatal(err)
			}
			h.calls()
			if err := h.c.Delete(ctx, h.get()); err != nil {
				t.Fatal(err)
			}
			if _, err := h.r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "platform", Name: "net"}}); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if got := h.calls(); got != tc.wantCalls {
				t.Errorf("deletion ran %q, want %q", got, tc.wantCalls)
			}
			if sec := h.planSecret(); sec != nil {
				t.Errorf("the plan Secret is still there: %v", sec)
			}
			if text, _ := h.planText(); text != "" {
				t.Errorf("the Plan is still there: %q", text)
			}
			err := h.c.Get(ctx, client.ObjectKeyFromObject(state), &corev1.Secret{})
			if diff := cmp.Diff(tc.wantState, err == nil); diff != "" {
				t.Errorf("state kept (-want +got):\n%s\nget: %v", diff, err)
			}
			if evs := h.drain(); tc.wantEvent != "" && !hasEvent(evs, tc.wantEvent) {
				t.Errorf("events %q, want one starting %q", evs, tc.wantEvent)
			}
		})
	}
}

// TestManualApprovalOfAStalePlan: an approved plan that went stale is planned again, and
// applied when the new plan is the same.
func TestManualApprovalOfAStalePlan(t *testing.T) {
	h := newHarness(t, func(m *terraformv1.Module) {
		m.Spec.Approval = common.ApprovalManual
	})
	create.File = []byte("saved-create")
	h.runner.plans = []*engine.Plan{create}
	mg := h.reconcile()
	if s := synced(mg); s.Reason != common.ReasonAwaitingApproval || h.calls() != "plan" || !hasEvent(h.drain(), "Normal PlanAwaitingApproval") {
		t.Fatalf("a manual create must wait: %+v", s)
	}
	if mg.Annotations[common.CreatePendingAnnotation] != "" {
		t.Error("a create that waits for approval is not in flight")
	}
	h.edit(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = create.ID })
	h.runner.stale, h.runner.plans = 1, []*engine.Plan{create}
	mg = h.reconcile()
	if got := h.calls(); got != "apply plan apply" {
		t.Fatalf("ran %q, want the stale plan planned again and applied", got)
	}
	if mg.Status.Terraform.LastApply == nil || mg.Status.Terraform.LastApply.ID != create.ID || !resource.IsReady(mg.Status.Conditions) {
		t.Errorf("after approval: %+v", mg.Status)
	}
}

// TestManualApprovalOfAStalePlanThatChanged: an approved plan that went stale and plans
// again differently applies nothing; the new plan gets its own id and waits for approval.
func TestManualApprovalOfAStalePlanThatChanged(t *testing.T) {
	h := newHarness(t, func(m *terraformv1.Module) { m.Spec.Approval = common.ApprovalManual })
	first := *create
	first.File = []byte("saved-first")
	h.runner.plans = []*engine.Plan{&first}
	h.reconcile()
	h.calls()
	h.drain()

	h.edit(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = first.ID })
	second := &engine.Plan{ID: "aaaa000000000009", File: []byte("saved-second"), Text: "the second plan",
		Changes: []engine.Change{{Address: "terraform_data.b", Actions: []string{"create"}}}}
	h.runner.stale, h.runner.plans = 1, []*engine.Plan{second}
	mg := h.reconcile()
	if got := h.calls(); got != "apply plan" || len(h.runner.applied) != 0 {
		t.Fatalf("ran %q and applied %v, want the stale plan planned again and nothing applied", got, h.runner.applied)
	}
	s := synced(mg)
	if s.Reason != common.ReasonAwaitingApproval || !strings.Contains(s.Message, "spec.approvedPlan "+first.ID+" is not the pending plan, so nothing was applied") {
		t.Errorf("Synced = %+v, want the new plan awaiting approval and the old approval named", s)
	}
	if p := mg.Status.Terraform.Plan; p == nil || p.ID != second.ID || mg.Status.Terraform.LastApply != nil {
		t.Errorf("status.terraform = %+v, want plan %s pending and nothing applied", mg.Status.Terraform, second.ID)
	}
	if !hasEvent(h.drain(), "Normal PlanAwaitingApproval") {
		t.Error("the new plan was not announced")
	}
	if diff := cmp.Diff("saved-second", h.savedFile()); diff != "" {
		t.Errorf("saved plan (-want +got):\n%s", diff)
	}
	if h.reconcile(); h.calls() != "" {
		t.Fatal("the new plan was planned again with nothing changed")
	}

	h.edit(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = second.ID })
	mg = h.reconcile()
	if got := h.calls(); got != "apply" || len(h.runner.applied) != 1 || string(h.runner.applied[0].File) != "saved-second" {
		t.Fatalf("approving the new id ran %q and applied %v, want the saved second plan", got, h.runner.applied)
	}
	if a := mg.Status.Terraform.LastApply; a == nil || a.ID != second.ID {
		t.Errorf("lastApply = %+v", a)
	}
}

// TestApprovedReplacementGoneStaleIsRefusedAgain: an approved destructive plan that went
// stale and plans again differently is refused under its new id, naming the old approval.
func TestApprovedReplacementGoneStaleIsRefusedAgain(t *testing.T) {
	h := newHarness(t, nil)
	h.reconcile()
	h.render.hash = "h2"
	first := *replace
	first.File = []byte("saved-first")
	h.runner.plans = []*engine.Plan{&first}
	h.reconcile()
	h.calls()
	h.drain()

	h.edit(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = first.ID })
	second := &engine.Plan{ID: "aaaa00000000000a", File: []byte("saved-second"),
		Changes: []engine.Change{{Address: "terraform_data.a", Actions: []string{"delete"}}}}
	h.runner.stale, h.runner.plans = 1, []*engine.Plan{second}
	mg := h.reconcile()
	if got := h.calls(); got != "apply plan" || len(h.runner.applied) != 0 {
		t.Fatalf("ran %q and applied %v, want the stale plan planned again and nothing applied", got, h.runner.applied)
	}
	s := synced(mg)
	if s.Reason != common.ReasonDestructiveChangeRefused || !strings.HasPrefix(s.Message, "spec.approvedPlan "+first.ID+" is not the pending plan, so nothing was applied. plan "+second.ID) {
		t.Errorf("Synced = %+v, want the new plan refused and the old approval named", s)
	}
	if p := mg.Status.Terraform.Plan; p == nil || p.ID != second.ID {
		t.Errorf("status plan = %+v, want %s", p, second.ID)
	}
	if evs := h.drain(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning DestructiveChangeRefused") {
		t.Errorf("events = %v, want one Warning for the new plan", evs)
	}
}

// TestObserveOnlyReportsDrift: the periodic plan's drift is reported, once, and never applied.
func TestObserveOnlyReportsDrift(t *testing.T) {
	h := newHarness(t, func(m *terraformv1.Module) {
		m.Spec.ManagementPolicies = []common.ManagementAction{common.ManagementObserve}
		now := metav1.NewTime(time.Now().Add(-2 * time.Hour))
		m.Status.Terraform = common.TerraformStatus{InputsHash: "h1", LastPlanTime: &now, LastApplyTime: &now}
		m.Status.Conditions = []metav1.Condition{
			{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: common.ReasonAvailable, LastTransitionTime: now, ObservedGeneration: 1},
			{Type: common.TypeSynced, Status: metav1.ConditionTrue, Reason: common.ReasonReconcileSuccess, LastTransitionTime: now, ObservedGeneration: 1}}
	})
	h.keepPlanText("the last applied plan")
	drift := *update
	drift.Text = "the drift plan"
	h.runner.plans = []*engine.Plan{&drift}
	mg := h.reconcile()
	if got := h.calls(); got != "plan" {
		t.Fatalf("ran %q, want a plan only", got)
	}
	if text, id := h.planText(); text != "the drift plan" || id != drift.ID {
		t.Errorf("plan show must print the drift plan's text: Plan holds %q of %s", text, id)
	}
	drifted := meta.FindStatusCondition(mg.Status.Conditions, common.TypeDrifted)
	if drifted == nil || drifted.Status != metav1.ConditionTrue || synced(mg).Status != metav1.ConditionTrue {
		t.Fatalf("Drifted = %+v, Synced = %+v", drifted, synced(mg))
	}
	if evs := h.drain(); len(evs) != 1 || !strings.HasPrefix(evs[0], "Normal DriftDetected") {
		t.Errorf("events = %v, want one DriftDetected", evs)
	}
	if h.reconcile(); h.calls() != "" {
		t.Error("observed drift was planned again before the drift interval")
	}
}

// TestSettledResourceReadsItsLockOnce: a resource with nothing to do does not read its
// state lock on every reconcile. A run that ended released the lock itself; one that
// failed (it may have been killed holding it) leaves the lock unknown, so the next
// reconcile reads it.
func TestSettledResourceReadsItsLockOnce(t *testing.T) {
	h := newHarness(t, nil)
	h.reconcile() // creates: the Apply reads the lock first
	after := h.runner.lockReads
	h.reconcile()
	h.reconcile()
	if got := h.runner.lockReads - after; got != 0 {
		t.Fatalf("after a run that ended, reconciles with nothing to do read the lock %d times; want none", got)
	}
	h.tf.locks.free("u-1", time.Now().Add(-time.Hour)) // a replica without shards holds it all its life
	h.reconcile()
	if got := h.runner.lockReads - after; got != 0 {
		t.Errorf("a lock this replica found free an hour ago was read %d times; want none", got)
	}
	h.render.hash = "h2"
	h.runner.plans = []*engine.Plan{update}
	h.tf.runner = &failingApply{fakeRunner: h.runner}
	_, _ = h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "platform", Name: "net"}})
	if h.tf.locks.known("u-1", time.Time{}) {
		t.Fatal("after a failed run, the lock is still taken to be free")
	}
	h.tf.runner, h.render.hash = h.runner, "h1"
	after = h.runner.lockReads
	h.reconcile()
	if got := h.runner.lockReads - after; got != 1 {
		t.Errorf("after a failed run, a reconcile read the lock %d times; want once", got)
	}
}

// TestFailedUpdateKeepsReady: a failed update leaves Ready as it was and says why in Synced.
func TestFailedUpdateKeepsReady(t *testing.T) {
	h := newHarness(t, nil)
	h.reconcile()
	h.render.hash = "h2"
	h.runner.plans = []*engine.Plan{update}
	h.tf.runner = &failingApply{fakeRunner: h.runner}
	_, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "platform", Name: "net"}})
	if err == nil {
		t.Fatal("a failed apply must be retried with backoff")
	}
	mg := h.get()
	if s := synced(mg); s.Status != metav1.ConditionFalse || s.Reason != common.ReasonReconcileError || s.Message != "boom: it broke" {
		t.Errorf("Synced = %+v", s)
	}
	if !resource.IsReady(mg.Status.Conditions) || mg.Status.Terraform.InputsHash != "h1" {
		t.Errorf("a failed update must keep Ready and the last applied inputs: %+v", mg.Status)
	}
}

type failingApply struct{ *fakeRunner }

func (f *failingApply) ApplyPlan(context.Context, engine.Workspace, *engine.Plan) (engine.Result, error) {
	return engine.Result{}, errors.New("Error: boom\n\nit broke")
}
