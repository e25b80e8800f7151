package policy

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/planpolicy"
	"terraplane.io/terraplane/internal/resource"
)

// TestInvalidExpression: a rule that does not compile makes the policy Synced=False with
// reason InvalidExpression and the CEL error, announced by one event; fixing it makes it
// Synced=True.
func TestInvalidExpression(t *testing.T) {
	p := &policyv1.NamespacedPlanPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "shop", UID: "u", Generation: 1},
		Spec: policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{{Name: "broken", Expression: "plan.resource_changes.all(rc, "}}}}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(p).WithStatusSubresource(p).Build()
	rec := events.NewFakeRecorder(10)
	r := &Reconciler{client: c, cache: &planpolicy.Cache{}, recorder: resource.RecorderFor(rec), kind: policyKinds[1]}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(p)}
	for range 2 {
		if _, err := r.Reconcile(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	got := &policyv1.NamespacedPlanPolicy{}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	s := meta.FindStatusCondition(got.Status.Conditions, common.TypeSynced)
	if s == nil || s.Status != metav1.ConditionFalse || s.Reason != ReasonInvalidExpression || !strings.Contains(s.Message, "rule broken: expression: ERROR: <input>:1:31: Syntax error") {
		t.Fatalf("Synced = %+v", s)
	}
	if n := len(rec.Events); n != 1 {
		t.Errorf("%d events, want one", n)
	}
	got.Spec.Rules[0].Expression = "true"
	got.Generation = 2
	if err := c.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if s := meta.FindStatusCondition(got.Status.Conditions, common.TypeSynced); s == nil || s.Status != metav1.ConditionTrue || got.Status.ObservedGeneration != 2 {
		t.Errorf("after the fix: Synced %+v, observedGeneration %d", s, got.Status.ObservedGeneration)
	}
}
