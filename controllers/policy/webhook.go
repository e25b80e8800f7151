package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	"terraplane.io/terraplane/internal/planpolicy"
)

// WebhookPath is where the webhook server answers the API server's reviews of plan
// policies.
const WebhookPath = "/validate-policy-terraplane-io-v1alpha1-planpolicies"

// WebhookName names the webhook in its ValidatingWebhookConfiguration.
const WebhookName = "planpolicies.policy.terraplane.io"

// Validator refuses a PlanPolicy or NamespacedPlanPolicy whose rules do not compile,
// with the CEL compiler's errors, as the policy controller would report them.
type Validator struct{}

var _ admission.Handler = Validator{}

// reviewed is what the validator reads of either policy kind.
type reviewed struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              policyv1.PlanPolicySpec `json:"spec"`
}

// Handle compiles every rule of the policy under review.
func (Validator) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	var p reviewed
	if err := json.Unmarshal(req.Object.Raw, &p); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("read %s: %w", req.Kind.Kind, err))
	}
	_, err := planpolicy.Compile(p.Name, p.Namespace, p.UID, p.Generation, p.Spec)
	var invalid *planpolicy.CompileError
	switch {
	case errors.As(err, &invalid):
		return admission.Denied(fmt.Sprintf("%s %s: its rules do not compile: %s", req.Kind.Kind, req.Name, invalid))
	case err != nil:
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.Allowed("")
}

// WebhookConfiguration is the ValidatingWebhookConfiguration named name that sends the
// plan policies' creates and updates to the webhook at clientConfig. It fails open
// (Ignore): while no controller answers, a policy is accepted, and a rule that does not
// compile is then reported on it (InvalidExpression) and denies the plans it matches.
func WebhookConfiguration(name string, clientConfig admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "terraplane"}},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         WebhookName,
			ClientConfig: clientConfig,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{policyv1.GroupVersion.Group}, APIVersions: []string{policyv1.GroupVersion.Version},
					Resources: []string{"planpolicies", "namespacedplanpolicies"}, Scope: ptr.To(admissionregistrationv1.AllScopes)},
			}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](5),
		}},
	}
}
