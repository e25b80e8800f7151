package argocd

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
)

// Both views of one object: Argo CD's (the chart's script) and kstatus's.
type views struct {
	Argo    string
	KStatus status.Status
}

// outcomes records errs on conds, one reconcile each, for generation gen, as a reconciler
// does (Synced, Ready by rule, then Reconciling or Stalled), and returns observedGeneration.
func outcomes(conds *[]metav1.Condition, observed, gen int64, rule resource.ReadyRule, errs ...error) int64 {
	for _, err := range errs {
		o := resource.Classify(err, resource.Retries{})
		o.Record(conds, gen, rule)
		resource.SetProgress(conds, &observed, gen, o.Succeeded() && resource.IsReady(*conds))
	}
	return observed
}

var (
	terraformRule = resource.KeepsReady(resource.Available(), resource.Creating("waiting for a successful apply"))
	nativeRule    = resource.FromOutcome(resource.Available())
	awaiting      = resource.Holdf(common.ReasonAwaitingApproval, "plan 3f9a6c1e2b7d4a50 awaits approval: set spec.approvedPlan")
	refused       = resource.Refusef(common.ReasonDestructiveChangeRefused, "plan 3f9a6c1e2b7d4a50 replaces terraform_data.a")
	userFault     = resource.UserErrorf("InvalidInput", "Invalid value for input variable")
	errTransient  = errors.New("connection reset by peer")
)

// module is a Module at generation gen after errs (nil: applied), its generation 1
// applied first when gen is 2.
func module(gen int64, errs ...error) client.Object {
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "ns", Generation: gen}}
	st := &m.Status
	if len(errs) == 0 {
		errs = []error{nil}
	}
	if gen > 1 {
		st.ObservedGeneration = outcomes(&st.Conditions, 0, 1, terraformRule, nil)
	}
	st.ObservedGeneration = outcomes(&st.Conditions, st.ObservedGeneration, gen, terraformRule, errs...)
	return m
}

// applying is a Module at generation gen whose apply of it has started.
func applying(gen int64) client.Object {
	m := module(gen).(*terraformv1.Module)
	m.Status.ObservedGeneration, m.Status.Conditions = 0, nil
	if gen > 1 {
		m.Status.ObservedGeneration = outcomes(&m.Status.Conditions, 0, 1, terraformRule, nil)
	}
	resource.MarkReconciling(&m.Status.Conditions, gen)
	return m
}

// object is a native Object at generation 1 after errs.
func object(errs ...error) client.Object {
	o := &kubernetesv1.Object{ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: "ns", Generation: 1}}
	o.Status.ObservedGeneration = outcomes(&o.Status.Conditions, 0, 1, nativeRule, errs...)
	return o
}

// bucket is a Bucket claim at generation 1 whose resource's Ready and Synced it mirrors.
func bucket(ready, synced metav1.Condition, applied bool) client.Object {
	b := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "app", Generation: 1}}
	b.Status.BindingPhase = common.BindingPhaseBound
	ready.ObservedGeneration, synced.ObservedGeneration = 1, 1
	b.Status.Conditions = []metav1.Condition{ready, synced}
	resource.SetProgress(&b.Status.Conditions, &b.Status.ObservedGeneration, 1, applied)
	return b
}

func cond(typ string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg}
}

func deleting(obj client.Object) client.Object {
	now := metav1.Now()
	obj.SetDeletionTimestamp(&now)
	obj.SetFinalizers([]string{resource.Finalizer})
	return obj
}

func withConditions[T client.Object](obj T, set func(T)) client.Object {
	set(obj)
	return obj
}

// TestHealth: what Argo CD (with the chart's scripts) and kstatus read of each family of
// kinds in each state, the objects' conditions made as the controllers make them.
func TestHealth(t *testing.T) {
	ready := cond(common.TypeReady, metav1.ConditionTrue, common.ReasonAvailable, "")
	succeeded := cond(common.TypeSynced, metav1.ConditionTrue, common.ReasonReconcileSuccess, "")
	held := func(reason string) metav1.Condition {
		return cond(common.TypeSynced, metav1.ConditionFalse, reason, "S3Bucket admin/b: ...")
	}
	cases := []struct {
		name string
		obj  client.Object
		want views
	}{
		{"Module: created", module(1), views{"Healthy", status.CurrentStatus}},
		{"Module: an edit applied", module(2), views{"Healthy", status.CurrentStatus}},
		{"Module: created before any status", &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: "m", Generation: 1}},
			views{"Progressing", status.CurrentStatus}}, // kstatus cannot tell without a status
		{"Module: its create running", applying(1), views{"Progressing", status.InProgressStatus}},
		{"Module: an edit being applied", applying(2), views{"Progressing", status.InProgressStatus}},
		{"Module: its create awaiting approval", module(1, awaiting), views{"Suspended", status.FailedStatus}},
		{"Module: an edit awaiting approval", module(2, awaiting), views{"Suspended", status.FailedStatus}},
		{"Module: an edit refused as destructive", module(2, refused), views{"Degraded", status.FailedStatus}},
		{"Module: an edit failed for bad input", module(2, userFault), views{"Degraded", status.FailedStatus}},
		{"Module: its create failing, retried", module(1, errTransient), views{"Degraded", status.InProgressStatus}},
		{"Module: an edit failing, retried", module(2, errTransient), views{"Degraded", status.InProgressStatus}},
		{"Module: an approved edit applied after the wait", module(2, awaiting, nil), views{"Healthy", status.CurrentStatus}},
		{"Module: being deleted", deleting(module(1)), views{"Progressing", status.TerminatingStatus}},
		{"Object: applied", object(nil), views{"Healthy", status.CurrentStatus}},
		{"Object: waiting for its namespace", object(resource.Waitf("WaitingForNamespace", "namespace x does not exist yet")),
			views{"Progressing", status.InProgressStatus}},
		{"Object: refused by its cluster", object(resource.UserErrorf("RemoteRejected", "cluster refused it")), views{"Degraded", status.FailedStatus}},
		{"Object: failing, retried", object(errTransient), views{"Degraded", status.InProgressStatus}},
		{"Bucket: ready", bucket(ready, succeeded, true), views{"Healthy", status.CurrentStatus}},
		{"Bucket: bound, its resource being created", bucket(cond(common.TypeReady, metav1.ConditionFalse, common.ReasonCreating, "waiting for a successful apply"), succeeded, false),
			views{"Progressing", status.InProgressStatus}},
		{"Bucket: its resource awaiting approval", bucket(cond(common.TypeReady, metav1.ConditionFalse, common.ReasonAwaitingApproval, "..."), held(common.ReasonAwaitingApproval), false),
			views{"Suspended", status.FailedStatus}},
		{"Bucket: its resource's edit refused", bucket(ready, held(common.ReasonDestructiveChangeRefused), false), views{"Degraded", status.FailedStatus}},
		{"Bucket: its resource failed for bad input", bucket(cond(common.TypeReady, metav1.ConditionFalse, "InvalidInput", "..."), held("InvalidInput"), false),
			views{"Degraded", status.FailedStatus}},
		{"Bucket: its resource failing, retried", bucket(ready, held(common.ReasonReconcileError), false), views{"Degraded", status.InProgressStatus}},
		{"Bucket: being deleted", deleting(bucket(ready, succeeded, true)), views{"Progressing", status.TerminatingStatus}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkHealth(t, tc.obj, tc.want) })
	}
}

// checkHealth asserts what Argo CD, with the chart's script of obj's family, and kstatus
// read of obj, and that Argo CD says why when it is not healthy.
func checkHealth(t *testing.T, obj client.Object, want views) {
	t.Helper()
	gvks, _, err := kinds.NewScheme().ObjectKinds(obj)
	if err != nil {
		t.Fatal(err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	argo, kst := Views(t, raw)
	if diff := cmp.Diff(want, views{argo.Status, kst.Status}); diff != "" {
		t.Errorf("(-want +got):\n%s\nArgo CD: %s; kstatus: %s", diff, argo.Message, kst.Message)
	}
	if argo.Status != "Healthy" && argo.Message == "" {
		t.Error("Argo CD gets no message saying why")
	}
}

// Views is what Argo CD, with the chart's script of obj's family, and kstatus read of obj.
func Views(t *testing.T, obj map[string]any) (Health, *status.Result) {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj}
	h, err := Eval(scripts(t)[FamilyOf(terraplaneKinds(), u.GroupVersionKind().GroupKind())], obj)
	if err != nil {
		t.Fatal(err)
	}
	res, err := status.Compute(u)
	if err != nil {
		t.Fatal(err)
	}
	return h, res
}
