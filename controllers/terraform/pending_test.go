package terraform

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/statelock"
	"terraplane.io/terraplane/internal/workspace"
)

// TestStateAddresses: the instances of a partial state, named as recovery imports name
// them (inside the module), so that only what is not in state is imported.
func TestStateAddresses(t *testing.T) {
	r := &connector{runner: &fakeRunner{state: `{"version": 4, "resources": [
		{"module": "module.this", "mode": "managed", "type": "aws_iam_role", "name": "this",
		 "instances": [{"index_key": "cluster"}, {"index_key": "node"}]},
		{"module": "module.this", "mode": "managed", "type": "aws_subnet", "name": "this", "instances": [{"index_key": 0}]},
		{"module": "module.this", "mode": "data", "type": "aws_region", "name": "current", "instances": [{}]},
		{"mode": "managed", "type": "terraform_data", "name": "root", "instances": [{}]}]}`}}
	got, err := (&run{t: r}).stateAddresses(context.Background(), &workspace.Rendered{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`aws_iam_role.this["cluster"]`, `aws_iam_role.this["node"]`, "aws_subnet.this[0]", "data.aws_region.current", "terraform_data.root"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("addresses (-want +got):\n%s", d)
	}
	if got, err := (&run{t: &connector{runner: &fakeRunner{}}}).stateAddresses(context.Background(), &workspace.Rendered{}); err != nil || got != nil {
		t.Errorf("no state: %v, %v", got, err)
	}
}

// TestMissingImports reads which imports found nothing from terraform's diagnostics.
func TestMissingImports(t *testing.T) {
	err := errors.New(`terraform apply: Error: Cannot import non-existent remote object

While attempting to import an existing object to "module.this.aws_iam_role.this[\"node\"]", the provider detected that no object exists with the given id.

Error: Cannot import non-existent remote object

While attempting to import an existing object to "module.this.aws_eks_cluster.this", the provider detected that no object exists with the given id.`)
	if d := cmp.Diff([]string{`aws_iam_role.this["node"]`, "aws_eks_cluster.this"}, missingImports(err)); d != "" {
		t.Errorf("missing imports (-want +got):\n%s", d)
	}
	if missingImports(errors.New("Error: something else")) != nil || missingImports(nil) != nil {
		t.Error("other errors name no missing import")
	}
}

// TestForSecretRetriesWhatFails: a changed Secret someone wrote (a Provider's credentials,
// say) retries the failing resources of its namespace at once, not the healthy ones nor
// those holding a plan; a Secret Terraplane wrote retries nothing.
func TestForSecretRetriesWhatFails(t *testing.T) {
	synced := func(status metav1.ConditionStatus, reason string) func(*terraformv1.Module) {
		return func(m *terraformv1.Module) {
			m.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: status, Reason: reason}}
		}
	}
	h := newHarness(t, synced(metav1.ConditionFalse, common.ReasonReconcileError))
	for name, edit := range map[string]func(*terraformv1.Module){
		"fine": synced(metav1.ConditionTrue, common.ReasonReconcileSuccess), "held": synced(metav1.ConditionFalse, common.ReasonAwaitingApproval),
	} {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "platform"}}
		edit(m)
		if err := h.c.Create(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws-creds", Namespace: "platform"}}
	if got := h.tf.forSecret(context.Background(), creds); len(got) != 1 || got[0].Name != "net" {
		t.Errorf("a credentials Secret retries %v, want the failing Module only", got)
	}
	conn := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "conn", Namespace: "platform", Labels: map[string]string{resource.ManagedLabel: "u-2"}}}
	if got := h.tf.forSecret(context.Background(), conn); len(got) != 0 {
		t.Errorf("a connection Secret retries %v, want nothing", got)
	}
}

// TestCreatePendingKeptWhenOutcomeUnknown: a create that timed out, was interrupted or
// could not save its state keeps the create-pending record, moved from its state lock
// onto the resource (the next run recovers, it does not create again); a create that
// failed plainly leaves no record anywhere.
func TestCreatePendingKeptWhenOutcomeUnknown(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		kept bool
	}{
		{"timed out", engine.Unrecorded(errors.New("terraform apply did not finish within 20m0s: context deadline exceeded")), true},
		{"state not saved", engine.Unrecorded(errors.New("Failed to persist state to backend")), true},
		{"failed", errors.New("Error: creating bucket: AccessDenied"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(m *terraformv1.Module) { m.Status.Terraform = common.TerraformStatus{} })
			h.runner.failing = tc.err
			_, _ = h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "platform", Name: "net"}})
			mg := h.get()
			if h.calls() != "create" || len(h.runner.creates) != 1 || !h.runner.creates[0] {
				t.Fatalf("calls: want one create, run as a create's (%v)", h.runner.creates)
			}
			if got := situate(mg, facts{}).pending; got != tc.kept {
				t.Errorf("create-pending recorded after the create = %v, want %v", got, tc.kept)
			}
			if h.lockRecordsCreate() {
				t.Error("the state lock still records the create")
			}
		})
	}
}

// TestStateMissingAppliesNothing: a resource that recorded resources, planned from an
// empty state (its state Secret was lost), applies nothing and says StateMissing.
func TestStateMissingAppliesNothing(t *testing.T) {
	h := newHarness(t, nil)
	if h.reconcile(); h.calls() != "create" {
		t.Fatal("want a create first")
	}
	h.runner.emptyState = true
	h.runner.plans = []*engine.Plan{{ID: "recreate", Resources: 1, Changes: []engine.Change{{Address: "terraform_data.a", Actions: []string{"create"}}}}}
	h.edit(func(m *terraformv1.Module) { m.Annotations = map[string]string{common.RequestedAtAnnotation: "now"} })
	mg := h.reconcile()
	if got := h.calls(); got != "plan" {
		t.Fatalf("ran %q, want a plan and no apply", got)
	}
	if s := synced(mg); s.Reason != common.ReasonStateMissing || !strings.Contains(s.Message, common.CreateAgainAnnotation) {
		t.Errorf("Synced = %+v, want StateMissing naming the way out", s)
	}
}

// TestRetries: a failed terraform run is retried after seconds, not milliseconds; a
// fault only a user can fix is a user error retried at the user-error interval.
func TestRetries(t *testing.T) {
	h := newHarness(t, nil)
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "platform", Name: "net"}}
	if first := h.tf.managedKind().FailureBackoff; first < time.Second {
		t.Errorf("a failed run is first retried after %s, want seconds", first)
	}
	h.runner.failing = errors.New("Error: creating S3 Bucket (b): operation error S3: CreateBucket, https response error StatusCode: 403, RequestID: 1, HostID: 2, api error AccessDenied: Access Denied.")
	res, err := h.r.Reconcile(context.Background(), req)
	if err != nil || res.RequeueAfter != time.Minute {
		t.Fatalf("access denied: result %+v, err %v; want a retry at the user-error interval and no error", res, err)
	}
	if s := synced(h.get()); s.Reason != "AccessDenied" || !strings.Contains(s.Message, "api error AccessDenied") {
		t.Errorf("Synced = %+v, want AccessDenied with the error code", s)
	}
	h.runner.failing = errors.New("Error: reading S3 Bucket (b): https response error StatusCode: 503, api error SlowDown")
	if _, err := h.r.Reconcile(context.Background(), req); err == nil {
		t.Error("a failure that may pass by itself is not retried with backoff")
	}
}

// TestCreateInterruptedKeepsItsRecord: a resource stopped at CreateInterrupted keeps its
// create-pending record through reconciles, so that nothing ever creates it again
// without the user's answer.
func TestCreateInterruptedKeepsItsRecord(t *testing.T) {
	h := newHarness(t, func(m *terraformv1.Module) {
		m.Annotations = map[string]string{common.CreatePendingAnnotation: "2026-11-27T10:00:00Z"}
		m.Status.Terraform = common.TerraformStatus{}
	})
	h.runner.emptyState = true
	h.runner.plans = []*engine.Plan{create, create}
	req := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "platform", Name: "net"}}
	for i := range 3 {
		_, _ = h.r.Reconcile(context.Background(), req)
		mg := h.get()
		if s := synced(mg); s.Reason != common.ReasonCreateInterrupted {
			t.Fatalf("reconcile %d: Synced = %+v, want CreateInterrupted", i, s)
		}
		if !situate(mg, facts{}).pending {
			t.Fatalf("reconcile %d cleared the create-pending record: the next one would create again", i)
		}
		if calls := h.calls(); strings.Contains(calls, "create") || strings.Contains(calls, "apply") {
			t.Fatalf("reconcile %d ran %q", i, calls)
		}
	}
}

// TestPendingAfterAStatusWrite: a first create goes on when the resource's status was
// written after the run read it (its own progress while terraform planned, as a
// plan-first create under load does); a newer generation, a create already recorded or
// an apply recorded meanwhile make it a conflict, and the run starts over without
// creating.
func TestPendingAfterAStatusWrite(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		meanwhile func(*terraformv1.Module)
		status    bool // the change is written to the status
		marked    bool
	}{
		"progress written": {func(m *terraformv1.Module) {
			m.Status.Conditions = []metav1.Condition{{Type: common.TypeReconciling, Status: metav1.ConditionTrue, Reason: common.ReasonTerraformRunning,
				Message: "terraform plan running for 6s", LastTransitionTime: metav1.Now()}}
		}, true, true},
		"applied meanwhile": {func(m *terraformv1.Module) {
			now := metav1.Now()
			m.Status.Terraform.LastApplyTime, m.Status.Terraform.Resources = &now, 2
		}, true, false},
		"marked meanwhile": {func(m *terraformv1.Module) {
			m.Annotations = map[string]string{common.CreatePendingAnnotation: "2026-12-02T09:00:00Z"}
		}, false, false},
		"edited meanwhile": {func(m *terraformv1.Module) { m.Spec.Approval = common.ApprovalManual; m.Generation++ }, false, false},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			e := h.scope(nil)
			latest := h.get()
			tc.meanwhile(latest)
			write := func() error { return h.c.Update(ctx, latest) }
			if tc.status {
				write = func() error { return h.c.Status().Update(ctx, latest) }
			}
			if err := write(); err != nil {
				t.Fatal(err)
			}
			_, err := e.markCreating(ctx)
			if tc.marked != (err == nil) || !tc.marked && !apierrors.IsConflict(err) {
				t.Fatalf("markCreating: %v, want marked %v (else a conflict)", err, tc.marked)
			}
			if e.creates != tc.marked || e.workspace().Creates != tc.marked {
				t.Errorf("the run creates: %v, its workspace a create's: %v; want %v", e.creates, e.workspace().Creates, tc.marked)
			}
		})
	}
}

// leaseKey is the state lock Lease of the harness's Module.
func (h *harness) leaseKey() client.ObjectKey {
	return statelock.LeaseKey("platform", resource.StateSuffix(h.get()))
}

// lockRecordsCreate says whether the Module's state lock records a create.
func (h *harness) lockRecordsCreate() bool {
	h.t.Helper()
	r, err := statelock.ReadLock(context.Background(), h.c, h.leaseKey())
	if err != nil {
		h.t.Fatal(err)
	}
	return r.CreatePending
}

// TestFirstCreateRecordsItselfOnTheLock: a first create is recorded on its state lock,
// in the write that takes the lock, and not on the resource: the resource is written
// only with the outcome (its status), and the lock is left free, with no record.
func TestFirstCreateRecordsItselfOnTheLock(t *testing.T) {
	h := newHarness(t, func(m *terraformv1.Module) { m.Status.Terraform = common.TerraformStatus{} })
	writes := 0
	count := func(obj client.Object) {
		if _, ok := obj.(*terraformv1.Module); ok {
			writes++
		}
	}
	h.tf.client = interceptor.NewClient(h.c.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			count(obj)
			return c.Patch(ctx, obj, patch, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			count(obj)
			return c.Update(ctx, obj, opts...)
		},
	})
	locked := false
	h.runner.onCreate = func() { locked = h.lockRecordsCreate() }
	mg := h.reconcile()
	if h.calls() != "create" || !locked {
		t.Fatalf("want one create, its lock recording it while it ran (%v)", locked)
	}
	if writes != 0 || mg.Annotations[common.CreatePendingAnnotation] != "" {
		t.Errorf("the create wrote the resource itself %d times (annotations %v); want only its status", writes, mg.Annotations)
	}
	if h.lockRecordsCreate() {
		t.Error("the lock still records the create after its outcome was known")
	}
	if info, err := statelock.LockHolder(context.Background(), h.c, h.leaseKey()); err != nil || info != nil {
		t.Errorf("the lock is held after the create: %+v, %v", info, err)
	}
	if s := synced(mg); s.Status != metav1.ConditionTrue {
		t.Errorf("Synced = %+v, want True", s)
	}
}

// TestCreateCutOffOnItsLock: a run killed during a first create leaves its lock held,
// recording the create. The next reconcile releases the lock, moves the record onto the
// resource and recovers from it: a user module with nothing in its state stops at
// CreateInterrupted and creates nothing; the lock keeps no record, and the next
// reconcile still stops there.
func TestCreateCutOffOnItsLock(t *testing.T) {
	h := newHarness(t, func(m *terraformv1.Module) { m.Status.Terraform = common.TerraformStatus{} })
	if _, err := h.runner.locker.Lock(context.Background(), h.leaseKey(), resource.StateSuffix(h.get()), "apply", true); err != nil {
		t.Fatal(err) // taken, never released: the run that took it is gone
	}
	h.runner.emptyState = true
	h.runner.plans = []*engine.Plan{create, create}
	for i := range 2 {
		mg := h.reconcile()
		if s := synced(mg); s.Reason != common.ReasonCreateInterrupted {
			t.Fatalf("reconcile %d: Synced = %+v, want CreateInterrupted", i, s)
		}
		if calls := h.calls(); strings.Contains(calls, "create") || strings.Contains(calls, "apply") {
			t.Fatalf("reconcile %d ran %q", i, calls)
		}
		if mg.Annotations[common.CreatePendingAnnotation] == "" || h.lockRecordsCreate() {
			t.Fatalf("reconcile %d: the resource records the create: %v, the lock still does: %v; want it moved to the resource",
				i, mg.Annotations, h.lockRecordsCreate())
		}
	}
	if info, err := statelock.LockHolder(context.Background(), h.c, h.leaseKey()); err != nil || info != nil {
		t.Errorf("the lock of the run cut off is still held: %+v, %v", info, err)
	}
}
