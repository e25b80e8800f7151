package claim

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/intake"
)

// claimMade is a Bucket claim of class fast named name, made at made.
func claimMade(name, uid string, made time.Time) *storagev1.Bucket {
	b := bucketClaim("fast")
	b.Name, b.UID, b.CreationTimestamp = name, types.UID("uid-"+uid), metav1.NewTime(made)
	return b
}

// TestReconcileQueuesBeyondTheIntakeCap: with one place in the namespace, the second
// claim makes no resource and says it is Queued; once the first claim's resource has
// reported, the second is woken and made.
func TestReconcileQueuesBeyondTheIntakeCap(t *testing.T) {
	ctx := context.Background()
	old := time.Now().Add(-time.Minute)
	r, c := bucketReconciler(t, portableClass("fast", "admin", nil), s3Class("admin", "team"),
		claimMade("first", "1", old), claimMade("second", "2", old.Add(time.Second)))
	r.opts.Intake = intake.New(func() int { return 1 })
	q := wakes(t, r)
	first := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "first"}}
	second := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "second"}}

	for _, req := range []ctrl.Request{first, second} {
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	res, err := r.Reconcile(ctx, second)
	if err != nil || res.RequeueAfter != queuedRetry {
		t.Errorf("queued claim: Reconcile = %+v, %v; want the safety-net timer only", res, err)
	}
	if made := buckets(ctx, t, c); len(made) != 1 || made[0] != "bucket-uid-1" {
		t.Fatalf("made %v; want the first claim's resource only", made)
	}
	b := &storagev1.Bucket{}
	if err := c.Get(ctx, second.NamespacedName, b); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{common.TypeSynced, common.TypeReady} {
		if cond := meta.FindStatusCondition(b.Status.Conditions, typ); cond == nil || cond.Reason != ReasonQueued {
			t.Errorf("%s = %+v; want %s", typ, cond, ReasonQueued)
		}
	}

	mg := &awsstoragev1.S3Bucket{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "admin", Name: "bucket-uid-1"}, mg); err != nil {
		t.Fatal(err)
	}
	// A long first apply's progress report says the create is under way: no outcome yet.
	mg.Status.BindingPhase = common.BindingPhaseBound
	mg.Status.Conditions = []metav1.Condition{
		{Type: common.TypeReady, Status: metav1.ConditionFalse, Reason: common.ReasonCreating, LastTransitionTime: metav1.Now()},
		{Type: common.TypeSynced, Status: metav1.ConditionTrue, Reason: common.ReasonReconcileSuccess, LastTransitionTime: metav1.Now()},
		{Type: common.TypeReconciling, Status: metav1.ConditionTrue, Reason: common.ReasonTerraformRunning, LastTransitionTime: metav1.Now()},
	}
	if err := c.Status().Update(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, first); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 0 {
		t.Fatalf("%d claims woken while the first resource is still being made; want none", q.Len())
	}

	meta.SetStatusCondition(&mg.Status.Conditions, metav1.Condition{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: "Available"})
	if err := c.Status().Update(ctx, mg); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, first); err != nil {
		t.Fatal(err)
	}
	wokeOnly(t, q, second)
	if _, err := r.Reconcile(ctx, second); err != nil {
		t.Fatal(err)
	}
	if made := buckets(ctx, t, c); len(made) != 2 {
		t.Fatalf("made %v; want the second claim's resource too", made)
	}
}

// TestClaimsLookedAtInAnyOrderGoInTheOrderTheyWereMade: the claim that begins a burst
// puts in line the claims waiting before it (not looked at yet, or waiting their class),
// whatever order the controller looks at them in; a claim failing for another reason
// is left to its retries.
func TestClaimsLookedAtInAnyOrderGoInTheOrderTheyWereMade(t *testing.T) {
	ctx := context.Background()
	old := time.Now().Add(-time.Minute)
	broken, waitedForClass := claimMade("broken", "0", old.Add(-time.Second)), claimMade("early", "1", old)
	broken.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: "InvalidParameters", LastTransitionTime: metav1.Now()}}
	waitedForClass.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: common.ReasonClassNotReady, LastTransitionTime: metav1.Now()}}
	r, c := bucketReconciler(t, portableClass("fast", "admin", nil), s3Class("admin", "team"),
		broken, waitedForClass, claimMade("late", "2", old.Add(time.Second)))
	r.opts.Intake = intake.New(func() int { return 1 })
	q := wakes(t, r)
	early := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "early"}}
	late := ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: "late"}}

	if _, err := r.Reconcile(ctx, late); err != nil {
		t.Fatal(err)
	}
	if made := buckets(ctx, t, c); len(made) != 0 {
		t.Fatalf("made %v for the claim made last, looked at first; want nothing yet", made)
	}
	wokeOnly(t, q, early)
	if _, err := r.Reconcile(ctx, early); err != nil {
		t.Fatal(err)
	}
	if made := buckets(ctx, t, c); len(made) != 1 || made[0] != "bucket-uid-1" {
		t.Fatalf("made %v; want the resource of the claim made first", made)
	}
}

func TestUnboundKeysAndWaitsForResource(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	queue := func(spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "queues.example.org", Version: "v1alpha1", Kind: "Queue"})
		return u
	}
	bound := claimMade("bound", "1", t0)
	bound.Spec.ResourceRef = &common.ObjectReference{Name: "bucket-uid-1"}
	deleting := claimMade("deleting", "2", t0)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	handed := claimMade("member", "3", t0)
	handed.Labels = map[string]string{common.PoolLabel: "warm"}
	handed.Annotations = map[string]string{common.PoolMemberTakenByAnnotation: "team/orders"}
	handedOutQueue := queue(map[string]any{})
	handedOutQueue.SetLabels(handed.Labels)
	handedOutQueue.SetAnnotations(handed.Annotations)
	for name, tc := range map[string]struct {
		obj     client.Object
		unbound bool
	}{
		"a claim with no resource":                    {claimMade("new", "4", t0), true},
		"a bound claim":                               {bound, false},
		"a claim being deleted":                       {deleting, false},
		"a pool member handed out":                    {handed, false},
		"a defined kind's claim with no resource":     {queue(map[string]any{"classRef": map[string]any{"name": "fast"}}), true},
		"a defined kind's claim with a null resource": {queue(map[string]any{"resourceRef": nil}), true},
		"a defined kind's bound claim":                {queue(map[string]any{"resourceRef": map[string]any{"name": "q"}}), false},
		"a defined kind's pool member handed out":     {handedOutQueue, false},
		"not a claim":                                 {&storagev1.BucketClass{}, false},
	} {
		if got := len(unboundKeys(tc.obj)) == 1; got != tc.unbound {
			t.Errorf("%s: indexed unbound %v, want %v", name, got, tc.unbound)
		}
	}

	for _, tc := range []struct {
		status metav1.ConditionStatus
		reason string
		waits  bool
	}{
		{"", "", true}, // not looked at yet
		{metav1.ConditionTrue, ReasonQueued, true},
		{metav1.ConditionTrue, "ClassRevisionPending", true},
		{metav1.ConditionFalse, ReasonClassNotFound, true},
		{metav1.ConditionFalse, common.ReasonClassNotReady, true},
		{metav1.ConditionFalse, "InvalidParameters", false},
		{metav1.ConditionFalse, common.ReasonReconcileError, false}, // making its resource failed, say
	} {
		c := claimMade("c", "5", t0)
		if tc.reason != "" {
			c.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: tc.status, Reason: tc.reason}}
		}
		if got := waitsForResource(c); got != tc.waits {
			t.Errorf("Synced=%s %s: waits for a resource %v, want %v", tc.status, tc.reason, got, tc.waits)
		}
	}
	if claim, ok := asClaim(queue(map[string]any{"classRef": map[string]any{"name": "fast"}})); !ok || claim.GetClaimSpec().ClassRef.Name != "fast" {
		t.Errorf("a defined kind's claim read as %+v, %v", claim, ok)
	}
}

// TestQueuedClaimStaysQuietAtFirst: a claim queued within seconds of being made writes
// no status yet: its turn usually comes first.
func TestQueuedClaimStaysQuietAtFirst(t *testing.T) {
	ctx := context.Background()
	r, c := bucketReconciler(t, portableClass("fast", "admin", nil), s3Class("admin", "team"),
		claimMade("first", "1", time.Now()), claimMade("second", "2", time.Now()))
	r.opts.Intake = intake.New(func() int { return 1 })
	for _, name := range []string{"first", "second"} {
		res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "team", Name: name}})
		if err != nil {
			t.Fatal(err)
		}
		if name == "second" && (res.RequeueAfter <= 0 || res.RequeueAfter > statusCoalesce) {
			t.Errorf("queued claim: Reconcile = %+v; want a look again within %v", res, statusCoalesce)
		}
	}
	b := &storagev1.Bucket{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "team", Name: "second"}, b); err != nil {
		t.Fatal(err)
	}
	if len(b.Status.Conditions) != 0 {
		t.Errorf("conditions %+v; want none written yet", b.Status.Conditions)
	}
}

// wakes is the queue r's intake gate wakes claims through, shut down when t ends.
func wakes(t *testing.T, r *Reconciler) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	r.waker.q.Store(&q)
	return q
}

// wokeOnly checks that q holds one claim, want, and takes it out.
func wokeOnly(t *testing.T, q workqueue.TypedRateLimitingInterface[reconcile.Request], want ctrl.Request) {
	t.Helper()
	if q.Len() != 1 {
		t.Fatalf("%d claims woken; want %v only", q.Len(), want)
	}
	if woken, _ := q.Get(); woken != want {
		t.Fatalf("woke %v; want %v", woken, want)
	}
	q.Done(want)
}

// buckets names the S3Buckets in c.
func buckets(ctx context.Context, t *testing.T, c client.Client) []string {
	t.Helper()
	list := &awsstoragev1.S3BucketList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mg := range list.Items {
		names = append(names, mg.Name)
	}
	return names
}

// TestQueuedRetryGrowsWithTheWait: a queued claim is looked at again after as long as it
// has waited, at least queuedRetry and at most maxQueuedRetry; a claim with no creation
// time gets queuedRetry.
func TestQueuedRetryGrowsWithTheWait(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		waited time.Duration
		want   time.Duration
	}{
		{0, queuedRetry},
		{time.Minute, queuedRetry},
		{5 * time.Minute, 5 * time.Minute},
		{12 * time.Minute, 12 * time.Minute},
		{20 * time.Minute, maxQueuedRetry},
		{3 * time.Hour, maxQueuedRetry},
	} {
		if got := queuedRetryAfter(now.Add(-tc.waited), now); got != tc.want {
			t.Errorf("waited %v: %v, want %v", tc.waited, got, tc.want)
		}
	}
	if got := queuedRetryAfter(time.Time{}, now); got != queuedRetry {
		t.Errorf("no creation time: %v, want %v", got, queuedRetry)
	}
}

// TestFirstOutcome: a place at the gate is held while the resource's first apply is
// under way, and freed by its outcome or by a wait on anything else.
func TestFirstOutcome(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason}
	}
	creating := cond(common.TypeReady, metav1.ConditionFalse, common.ReasonCreating)
	synced := cond(common.TypeSynced, metav1.ConditionTrue, common.ReasonReconcileSuccess)
	for name, tc := range map[string]struct {
		conds []metav1.Condition
		want  bool
	}{
		"nothing written yet":          {nil, false},
		"a long first apply's report":  {[]metav1.Condition{creating, synced, cond(common.TypeReconciling, metav1.ConditionTrue, common.ReasonTerraformRunning)}, false},
		"Ready":                        {[]metav1.Condition{cond(common.TypeReady, metav1.ConditionTrue, "Available"), synced}, true},
		"failing":                      {[]metav1.Condition{creating, cond(common.TypeSynced, metav1.ConditionFalse, common.ReasonReconcileError)}, true},
		"held for an approval":         {[]metav1.Condition{creating, cond(common.TypeSynced, metav1.ConditionFalse, common.ReasonAwaitingApproval)}, true},
		"waiting for another's output": {[]metav1.Condition{creating, cond(common.TypeSynced, metav1.ConditionTrue, "WaitingForConnectionDetails")}, true},
		"not ready for another reason": {[]metav1.Condition{cond(common.TypeReady, metav1.ConditionFalse, "Unavailable"), synced}, true},
	} {
		mg := &awsstoragev1.S3Bucket{}
		mg.Status.Conditions = tc.conds
		if got := firstOutcome(mg); got != tc.want {
			t.Errorf("%s: firstOutcome = %v, want %v", name, got, tc.want)
		}
	}
}
