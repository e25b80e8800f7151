package policy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
)

// TestValidator: a create or update whose rules compile is allowed; one whose rule does
// not is denied (403) with the rule's name and the CEL error; a delete is not looked at;
// what is not a policy is a bad request.
func TestValidator(t *testing.T) {
	policy := func(expr string) []byte {
		b, _ := json.Marshal(&policyv1.NamespacedPlanPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "shop"},
			Spec: policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{{Name: "r", Expression: expr}}}})
		return b
	}
	cases := []struct {
		name    string
		op      admissionv1.Operation
		raw     []byte
		allowed bool
		code    int32
		want    string
	}{
		{"compiles", admissionv1.Create, policy(`plan.resource_changes.size() < 5`), true, 200, ""},
		{"syntax error", admissionv1.Create, policy(`plan.resource_changes.all(rc,`), false, 403,
			"NamespacedPlanPolicy p: its rules do not compile: rule r: expression: ERROR: <input>:1:30: Syntax error"},
		{"update to a field the plan lacks", admissionv1.Update, policy(`plan.resourceChanges.size() < 5`), false, 403, "undefined field 'resourceChanges'"},
		{"delete", admissionv1.Delete, nil, true, 200, ""},
		{"not a policy", admissionv1.Create, []byte(`{"spec": 7}`), false, 400, "read NamespacedPlanPolicy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: tc.op, Name: "p", Namespace: "shop",
				Kind:   metav1.GroupVersionKind{Group: policyv1.GroupVersion.Group, Version: "v1alpha1", Kind: "NamespacedPlanPolicy"},
				Object: runtime.RawExtension{Raw: tc.raw}}}
			res := Validator{}.Handle(context.Background(), req)
			if res.Allowed != tc.allowed || res.Result.Code != tc.code {
				t.Fatalf("allowed %v (code %d: %s), want %v (%d)", res.Allowed, res.Result.Code, res.Result.Message, tc.allowed, tc.code)
			}
			if !strings.Contains(res.Result.Message, tc.want) {
				t.Errorf("message %q lacks %q", res.Result.Message, tc.want)
			}
		})
	}
}

// TestWebhookConfiguration: the configuration sends creates and updates of both kinds,
// in every scope, to the webhook, and fails open.
func TestWebhookConfiguration(t *testing.T) {
	url := "https://127.0.0.1:9443" + WebhookPath
	c := WebhookConfiguration("terraplane-plan-policies", admissionregistrationv1.WebhookClientConfig{URL: &url})
	if len(c.Webhooks) != 1 || c.Webhooks[0].Name != WebhookName {
		t.Fatalf("webhooks %+v", c.Webhooks)
	}
	w := c.Webhooks[0]
	if got := strings.Join(w.Rules[0].Resources, ","); got != "planpolicies,namespacedplanpolicies" {
		t.Errorf("resources %s", got)
	}
	if *w.FailurePolicy != "Ignore" || *w.SideEffects != "None" || *w.Rules[0].Scope != "*" {
		t.Errorf("failurePolicy %s, sideEffects %s, scope %s", *w.FailurePolicy, *w.SideEffects, *w.Rules[0].Scope)
	}
}
