package claim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/dynclaim"
	"terraplane.io/terraplane/internal/resource"
)

// TestOverridden: a parameter whose value the resource's inputs hold otherwise is
// overridden; one they hold as the claim says, or do not hold, is not.
func TestOverridden(t *testing.T) {
	for name, c := range map[string]struct {
		params, inputs map[string]any
		want           []string
	}{
		"the class fixes a value":       {map[string]any{"visibility_timeout_seconds": int64(60), "name": "q"}, map[string]any{"visibility_timeout_seconds": int64(45), "name": "q"}, []string{"spec.parameters.visibility_timeout_seconds"}},
		"the same value":                {map[string]any{"delay": int64(5)}, map[string]any{"delay": int64(5)}, nil},
		"a structured value":            {map[string]any{"tags": map[string]any{"a": "1"}}, map[string]any{"tags": map[string]any{"a": "2"}}, []string{"spec.parameters.tags"}},
		"an input the claim leaves out": {map[string]any{"name": "q"}, map[string]any{"name": "q", "fifo": true}, nil},
		"a Secret reference":            {map[string]any{"tokenSecretRef": map[string]any{"name": "s"}}, map[string]any{}, nil},
		"two, sorted":                   {map[string]any{"b": "1", "a": "1"}, map[string]any{"a": "2", "b": "2"}, []string{"spec.parameters.a", "spec.parameters.b"}},
	} {
		if diff := cmp.Diff(c.want, overridden(map[string]any{"parameters": c.params}, c.inputs)); diff != "" {
			t.Errorf("%s: overridden (-want +got):\n%s", name, diff)
		}
	}
}

// TestMirrorOverrides: the claim says which parameter the class overrides and that the
// class wins, with one Warning event, not one per reconcile; fixed, the condition goes.
func TestMirrorOverrides(t *testing.T) {
	claim := dynclaim.NewClaim(schema.GroupVersionKind{Group: "queues.example.org", Version: "v1alpha1", Kind: "Queue"})
	claim.Spec.Parameters = &apiextensionsv1.JSON{Raw: []byte(`{"visibility_timeout_seconds":60}`)}
	mg := &terraformv1.Module{}
	mg.Spec.ClassRef = &common.ClassReference{Kind: "ModuleClass", Namespace: "terraplane-system", Name: "sqs"}
	mg.Spec.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"visibility_timeout_seconds":45}`)}
	notes := mirrorOverrides(claim, mg)
	want := "parameter spec.parameters.visibility_timeout_seconds: ModuleClass terraplane-system/sqs fixes the value, and the class's value wins over the claim's; remove it from the claim, or ask the platform team to stop fixing it"
	if diff := cmp.Diff([]resource.Note{{Type: corev1.EventTypeWarning, Reason: ReasonClassValueWins, Message: want}}, notes); diff != "" {
		t.Errorf("first notes (-want +got):\n%s", diff)
	}
	c := meta.FindStatusCondition(claim.Status.Conditions, TypeParametersOverridden)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonClassValueWins || c.Message != want {
		t.Fatalf("condition %+v", c)
	}
	if notes := mirrorOverrides(claim, mg); len(notes) != 0 {
		t.Errorf("a second reconcile sent %v", notes)
	}
	claim.Spec.Parameters.Raw = []byte(`{"visibility_timeout_seconds":45}`)
	if notes := mirrorOverrides(claim, mg); len(notes) != 0 || meta.FindStatusCondition(claim.Status.Conditions, TypeParametersOverridden) != nil {
		t.Errorf("the claim asks what the class fixes: %v, %v", notes, claim.Status.Conditions)
	}
}
