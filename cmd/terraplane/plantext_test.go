package main

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
)

// TestPlanText: plan show reads a plan's text from its Plan, which a reviewer may read;
// from the plan Secret only where an older controller kept it there, and a caller who
// may not read Secrets (an approver) gets no text rather than an error.
func TestPlanText(t *testing.T) {
	mg := heldModule("aaaa000000000003", metav1.Condition{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: common.ReasonAwaitingApproval})
	plan := func(id, text string) *terraformv1.Plan {
		return &terraformv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: resource.PlanName(mg), Namespace: "platform"},
			Summary: common.PlanSummary{ID: id}, Text: text}
	}
	legacy := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: resource.PlanSecretName(mg), Namespace: "platform"},
		Data: map[string][]byte{resource.PlanTextKey: []byte("kept in the Secret")}}
	forbidSecrets := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, ok := obj.(*corev1.Secret); ok {
			return apierrors.NewForbidden(corev1.Resource("secrets"), key.Name, nil)
		}
		return c.Get(ctx, key, obj, opts...)
	}}
	for name, tc := range map[string]struct {
		objs  []client.Object
		funcs interceptor.Funcs
		want  string
	}{
		"the Plan":                             {[]client.Object{plan("aaaa000000000003", "in the Plan"), legacy}, interceptor.Funcs{}, "in the Plan"},
		"a Plan of another plan, older Secret": {[]client.Object{plan("aaaa000000000002", "older"), legacy}, interceptor.Funcs{}, "kept in the Secret"},
		"no Plan, older Secret":                {[]client.Object{legacy}, interceptor.Funcs{}, "kept in the Secret"},
		"the Plan, Secrets forbidden":          {[]client.Object{plan("aaaa000000000003", "in the Plan")}, forbidSecrets, "in the Plan"},
		"no Plan, Secrets forbidden":           {nil, forbidSecrets, ""},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(tc.objs...).WithInterceptorFuncs(tc.funcs).Build()
			got, err := planText(context.Background(), c, mg, "aaaa000000000003")
			if err != nil || got != tc.want {
				t.Errorf("planText = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
