package managed

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// fakeExternal is a Connector and External that plays back what it is told and records
// every call.
type fakeExternal struct {
	connectErr error
	obs        Observation
	observeErr error
	applied    Applied
	applyErr   error
	deleteErr  error
	calls      []string
	onApply    func()
	// reports makes Apply write a progress report before it ends, as a terraform run
	// does once it has run a while.
	reports  bool
	progress func(context.Context) error
}

func (f *fakeExternal) Progress(write func(context.Context) error) { f.progress = write }

func (f *fakeExternal) Connect(context.Context, resource.Managed) (External, error) {
	f.calls = append(f.calls, "connect")
	return f, f.connectErr
}

func (f *fakeExternal) Observe(context.Context, resource.Managed) (Observation, error) {
	f.calls = append(f.calls, "observe")
	return f.obs, f.observeErr
}

func (f *fakeExternal) Apply(ctx context.Context, _ resource.Managed) (Applied, error) {
	f.calls = append(f.calls, "apply")
	if f.reports {
		_ = f.progress(ctx) // as a terraform run's reports, one that fails lets the run go on
	}
	if f.onApply != nil {
		f.onApply()
	}
	return f.applied, f.applyErr
}

func (f *fakeExternal) Delete(context.Context, resource.Managed) error {
	f.calls = append(f.calls, "delete")
	return f.deleteErr
}

func (f *fakeExternal) took() string {
	s := strings.Join(f.calls, " ")
	f.calls = nil
	return s
}

// harness is a reconciler of Objects over a fake client and a fake External.
type harness struct {
	t   *testing.T
	r   *Reconciler
	c   client.Client
	ext *fakeExternal
}

func newHarness(t *testing.T, keepsReady bool, edit func(*kubernetesv1.Object)) *harness {
	t.Helper()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = kubernetesv1.AddToScheme(scheme)
	o := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Name: "obj", Namespace: "platform", UID: "u-1", Generation: 1}}
	o.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: "obj-conn"}
	if edit != nil {
		edit(o)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(o).WithStatusSubresource(o).Build()
	ext := &fakeExternal{}
	k := Kind{Name: "object", New: func() resource.Managed { return &kubernetesv1.Object{} },
		NewList: func() client.ObjectList { return &kubernetesv1.ObjectList{} }, Connector: ext, KeepsReady: keepsReady,
		Retries: func(resource.Managed) resource.Retries {
			return resource.Retries{Success: time.Hour, UserError: time.Minute}
		},
		Recorder: resource.RecorderFor(events.NewFakeRecorder(100))}
	return &harness{t: t, r: New(c, k), c: c, ext: ext}
}

// reconcile runs one reconcile and returns its result and the Object as it is afterwards
// (nil when it is gone).
func (h *harness) reconcile() (ctrl.Result, *kubernetesv1.Object, error) {
	h.t.Helper()
	res, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "platform", Name: "obj"}})
	o := &kubernetesv1.Object{}
	if gerr := h.c.Get(context.Background(), client.ObjectKey{Namespace: "platform", Name: "obj"}, o); gerr != nil {
		return res, nil, err
	}
	return res, o, err
}

// edit changes the Object's spec, as a user's edit does: a new generation.
func (h *harness) edit() {
	h.t.Helper()
	o := &kubernetesv1.Object{}
	key := client.ObjectKey{Namespace: "platform", Name: "obj"}
	if err := h.c.Get(context.Background(), key, o); err != nil {
		h.t.Fatal(err)
	}
	o.Generation++ // the fake client does not count generations
	o.Spec.ReclaimPolicy = common.ReclaimRetain
	if err := h.c.Update(context.Background(), o); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) secret() map[string][]byte {
	s := &corev1.Secret{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: "platform", Name: "obj-conn"}, s); err != nil {
		return nil
	}
	return s.Data
}

func condition(o *kubernetesv1.Object, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(o.Status.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func TestUpToDateAppliesNothing(t *testing.T) {
	h := newHarness(t, false, nil)
	h.ext.obs = Observation{UpToDate: true, ConnectionDetails: map[string][]byte{"endpoint": []byte("e")}}
	res, o, err := h.reconcile()
	if err != nil || h.ext.took() != "connect observe" {
		t.Fatalf("err %v, calls %v: want connect and observe only", err, h.ext.calls)
	}
	if s := condition(o, common.TypeSynced); s.Status != metav1.ConditionTrue || s.Reason != common.ReasonReconcileSuccess {
		t.Errorf("Synced = %+v", s)
	}
	if r := condition(o, common.TypeReady); r.Reason != common.ReasonAvailable || o.Status.ObservedGeneration != 1 {
		t.Errorf("Ready = %+v, observedGeneration %d", r, o.Status.ObservedGeneration)
	}
	if string(h.secret()["endpoint"]) != "e" || res.RequeueAfter != time.Hour || len(o.Finalizers) != 1 {
		t.Errorf("secret %v, result %+v, finalizers %v", h.secret(), res, o.Finalizers)
	}
}

func TestNotUpToDateApplies(t *testing.T) {
	h := newHarness(t, false, nil)
	h.ext.applied = Applied{ConnectionDetails: map[string][]byte{"token": []byte("t")}}
	_, o, err := h.reconcile()
	if err != nil || h.ext.took() != "connect observe apply" {
		t.Fatalf("err %v, calls %v: want an apply", err, h.ext.calls)
	}
	if s := condition(o, common.TypeSynced); s.Status != metav1.ConditionTrue || string(h.secret()["token"]) != "t" {
		t.Errorf("Synced = %+v, secret %v", s, h.secret())
	}
}

func TestSettledWritesOnlyTheGeneration(t *testing.T) {
	h := newHarness(t, true, func(o *kubernetesv1.Object) {
		o.Generation = 2
		o.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: "AwaitingApproval",
			ObservedGeneration: 1, LastTransitionTime: metav1.Now()}}
	})
	h.ext.obs = Observation{Settled: true, RequeueAfter: time.Minute}
	res, o, err := h.reconcile()
	if err != nil || h.ext.took() != "connect observe" || res.RequeueAfter != time.Minute {
		t.Fatalf("err %v, calls %v, result %+v", err, h.ext.calls, res)
	}
	if s := condition(o, common.TypeSynced); s.Reason != "AwaitingApproval" || s.ObservedGeneration != 2 || o.Status.ObservedGeneration != 2 {
		t.Errorf("Synced = %+v, observedGeneration %d: want the condition kept, for generation 2", s, o.Status.ObservedGeneration)
	}
}

func TestErrorsBecomeSyncedFalse(t *testing.T) {
	for _, tc := range []struct {
		name       string
		keepsReady bool
		set        func(*fakeExternal)
		calls      string
		reason     string
		ready      string
		retried    bool
	}{
		{"connect", false, func(f *fakeExternal) { f.connectErr = resource.UserErrorf("ProviderNotFound", "no provider") },
			"connect", "ProviderNotFound", "ProviderNotFound", false},
		{"observe", false, func(f *fakeExternal) { f.observeErr = resource.UserErrorf("Unreachable", "no answer") },
			"connect observe", "Unreachable", "Unreachable", false},
		{"apply", false, func(f *fakeExternal) { f.applyErr = errors.New("boom") },
			"connect observe apply", common.ReasonReconcileError, common.ReasonReconcileError, true},
		{"apply of a kind that keeps Ready", true, func(f *fakeExternal) { f.applyErr = errors.New("boom") },
			"connect observe apply", common.ReasonReconcileError, common.ReasonAvailable, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.keepsReady, nil)
			h.reconcile() // Available first
			h.ext.took()
			tc.set(h.ext)
			_, o, err := h.reconcile()
			if (err != nil) != tc.retried || h.ext.took() != tc.calls {
				t.Fatalf("err %v, calls %v", err, h.ext.calls)
			}
			if s := condition(o, common.TypeSynced); s.Status != metav1.ConditionFalse || s.Reason != tc.reason {
				t.Errorf("Synced = %+v, want False %s", s, tc.reason)
			}
			if r := condition(o, common.TypeReady); r.Reason != tc.ready {
				t.Errorf("Ready = %+v, want reason %s", r, tc.ready)
			}
		})
	}
}

func TestDeletionDeletesThenLetsGo(t *testing.T) {
	h := newHarness(t, false, nil)
	h.reconcile()
	h.ext.took()
	o := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Name: "obj", Namespace: "platform"}}
	if err := h.c.Delete(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	h.ext.deleteErr = resource.UserErrorf("Stuck", "cannot reach it")
	_, got, err := h.reconcile()
	if err != nil || h.ext.took() != "delete" || got == nil {
		t.Fatalf("err %v, calls %v, object %v: want a delete that fails and keeps the object", err, h.ext.calls, got)
	}
	if s, r := condition(got, common.TypeSynced), condition(got, common.TypeReady); s.Reason != "Stuck" ||
		s.Message != "cannot delete: cannot reach it" || r.Reason != common.ReasonDeleting {
		t.Errorf("Synced = %+v, Ready = %+v", s, r)
	}
	h.ext.deleteErr = nil
	if _, got, err = h.reconcile(); err != nil || h.ext.took() != "delete" || got != nil {
		t.Fatalf("err %v, object %v: want the finalizer removed and the object gone", err, got)
	}
}

func TestPausedIsLeftAlone(t *testing.T) {
	h := newHarness(t, false, func(o *kubernetesv1.Object) { o.Annotations = map[string]string{common.PausedAnnotation: "true"} })
	if _, o, err := h.reconcile(); err != nil || h.ext.took() != "" || len(o.Finalizers) != 0 {
		t.Fatalf("err %v, calls %v, finalizers %v", err, h.ext.calls, o.Finalizers)
	}
}

// TestFailureBackoff: a kind's failures are retried after its FailureBackoff, doubling.
func TestFailureBackoff(t *testing.T) {
	rl := Kind{FailureBackoff: 5 * time.Second}.rateLimiter()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "x"}}
	if first, second := rl.When(req), rl.When(req); first != 5*time.Second || second != 10*time.Second {
		t.Errorf("backoff %s then %s, want 5s then 10s", first, second)
	}
	if (Kind{}).rateLimiter() != nil {
		t.Error("a kind without FailureBackoff keeps controller-runtime's rate limiter")
	}
}
