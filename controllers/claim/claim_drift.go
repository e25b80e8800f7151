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

// mirrorDrift copies the resource's Drifted condition to the claim, and says so in an
// Normal event (as the resource's) when the resource found new drift: the app team sees
// it where it looks.
func mirrorDrift(claim resource.Claim, mg resource.Managed) []resource.Note {
	st := claim.GetClaimStatus()
	var drifted *metav1.Condition
	if mg != nil {
		drifted = meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeDrifted)
	}
	if drifted == nil {
		meta.RemoveStatusCondition(&st.Conditions, common.TypeDrifted)
		return nil
	}
	msg := fmt.Sprintf("%s %s/%s: %s", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName(), drifted.Message)
	if drifted.Message == "" {
		msg = ""
	}
	changed := resource.SetCondition(&st.Conditions, claim.GetGeneration(), common.TypeDrifted, drifted.Status, drifted.Reason, msg)
	if !changed || drifted.Status != metav1.ConditionTrue {
		return nil
	}
	return []resource.Note{{Type: corev1.EventTypeNormal, Reason: common.ReasonDriftDetected, Message: msg}}
}
