package claim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// forwardRequest passes the claim's terraplane.io/requested-at annotation to its bound
// resource, which then checks for drift now rather than at its next drift interval: an
// app team asks through the claim, as it cannot reach the resource.
func (r *Reconciler) forwardRequest(ctx context.Context, claim resource.Claim, mg resource.Managed) error {
	want := claim.GetAnnotations()[common.RequestedAtAnnotation]
	if want == "" || mg.GetAnnotations()[common.RequestedAtAnnotation] == want {
		return nil
	}
	orig := mg.DeepCopyObject().(client.Object)
	ann := mg.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[common.RequestedAtAnnotation] = want
	mg.SetAnnotations(ann)
	if err := r.client.Patch(ctx, mg, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("ask %s %s/%s for a drift check: %w", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName(), err)
	}
	return nil
}

// mirrorDrift gives the claim a Drifted condition that says what its resource's does, and
// the resource's last drift correction: the app team sees drift, found or corrected, where
// it looks. A change of that condition to drift found or corrected is also a Normal event.
func mirrorDrift(claim resource.Claim, mg resource.Managed) []resource.Note {
	st := claim.GetClaimStatus()
	drifted := driftOf(mg)
	if drifted == nil {
		meta.RemoveStatusCondition(&st.Conditions, common.TypeDrifted)
		return nil
	}
	if drifted.Message != "" {
		drifted.Message = fmt.Sprintf("%s %s/%s: %s", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName(), drifted.Message)
	}
	changed := resource.SetCondition(&st.Conditions, claim.GetGeneration(), common.TypeDrifted, drifted.Status, drifted.Reason, drifted.Message)
	if !changed || drifted.Reason == common.ReasonNoDrift {
		return nil
	}
	return []resource.Note{{Type: corev1.EventTypeNormal, Reason: drifted.Reason, Message: drifted.Message}}
}

// driftOf is mg's Drifted condition, or, while that says there is none and mg's last
// apply corrected drift, a DriftCorrected one naming that plan; nil before mg's first plan.
func driftOf(mg resource.Managed) *metav1.Condition {
	if mg == nil {
		return nil
	}
	st := mg.GetManagedStatus()
	c := meta.FindStatusCondition(st.Conditions, common.TypeDrifted)
	if c == nil {
		return nil
	}
	c = c.DeepCopy()
	plan, applied := st.Terraform.Plan, st.Terraform.LastApply
	if c.Status == metav1.ConditionFalse && plan != nil && plan.Reason == common.PlanDrift && applied != nil && applied.ID == plan.ID {
		c.Reason, c.Message = common.ReasonDriftCorrected, fmt.Sprintf("corrected drift with plan %s", plan.ID)
	}
	return c
}
