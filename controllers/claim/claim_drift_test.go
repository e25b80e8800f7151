package claim

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestMirrorDrift: the claim carries its resource's Drifted condition, or its last drift
// correction, and new drift or a new correction (only new ones) gives one Normal event
// that names the resource.
func TestMirrorDrift(t *testing.T) {
	drifted := func(status metav1.ConditionStatus, reason, msg string) *metav1.Condition {
		return &metav1.Condition{Type: common.TypeDrifted, Status: status, Reason: reason, Message: msg}
	}
	const plan = "plan p1: ~ aws_s3_bucket.this"
	const named = "S3Bucket admin/bucket-uid-1: " + plan
	const corrected = "S3Bucket admin/bucket-uid-1: corrected drift with plan p1"
	for name, tc := range map[string]struct {
		mgCond    *metav1.Condition // the resource's Drifted
		corrected bool              // the resource's last apply was its drift plan
		claimCond *metav1.Condition // the claim's before
		noMg      bool
		want      *metav1.Condition // the claim's after (Type, Status, Reason, Message)
		notes     []resource.Note
	}{
		"new drift": {
			mgCond: drifted(metav1.ConditionTrue, common.ReasonDriftDetected, plan),
			want:   drifted(metav1.ConditionTrue, common.ReasonDriftDetected, named),
			notes:  []resource.Note{{Type: corev1.EventTypeNormal, Reason: common.ReasonDriftDetected, Message: named}},
		},
		"drift already mirrored": {
			mgCond:    drifted(metav1.ConditionTrue, common.ReasonDriftDetected, plan),
			claimCond: drifted(metav1.ConditionTrue, common.ReasonDriftDetected, named),
			want:      drifted(metav1.ConditionTrue, common.ReasonDriftDetected, named),
		},
		"drift gone without an apply": {
			mgCond:    drifted(metav1.ConditionFalse, common.ReasonNoDrift, ""),
			claimCond: drifted(metav1.ConditionTrue, common.ReasonDriftDetected, named),
			want:      drifted(metav1.ConditionFalse, common.ReasonNoDrift, ""),
		},
		"drift corrected": {
			mgCond:    drifted(metav1.ConditionFalse, common.ReasonNoDrift, ""),
			corrected: true,
			claimCond: drifted(metav1.ConditionTrue, common.ReasonDriftDetected, named),
			want:      drifted(metav1.ConditionFalse, common.ReasonDriftCorrected, corrected),
			notes:     []resource.Note{{Type: corev1.EventTypeNormal, Reason: common.ReasonDriftCorrected, Message: corrected}},
		},
		"correction already mirrored": {
			mgCond:    drifted(metav1.ConditionFalse, common.ReasonNoDrift, ""),
			corrected: true,
			claimCond: drifted(metav1.ConditionFalse, common.ReasonDriftCorrected, corrected),
			want:      drifted(metav1.ConditionFalse, common.ReasonDriftCorrected, corrected),
		},
		"resource has not planned yet": {
			claimCond: drifted(metav1.ConditionFalse, common.ReasonNoDrift, ""),
		},
		"unbound": {
			noMg:      true,
			claimCond: drifted(metav1.ConditionTrue, common.ReasonDriftDetected, named),
		},
	} {
		t.Run(name, func(t *testing.T) {
			claim := bucketClaim("fast")
			if tc.claimCond != nil {
				claim.Status.Conditions = []metav1.Condition{*tc.claimCond}
			}
			var mg resource.Managed
			if !tc.noMg {
				s3 := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "bucket-uid-1"}}
				s3.SetGroupVersionKind(awsstoragev1.GroupVersion.WithKind("S3Bucket"))
				if tc.mgCond != nil {
					s3.Status.Conditions = []metav1.Condition{*tc.mgCond}
				}
				s3.Status.Terraform.Plan = &common.PlanSummary{ID: "p1", Reason: common.PlanDrift}
				if tc.corrected {
					s3.Status.Terraform.LastApply = &common.ApplySummary{ID: "p1"}
				}
				mg = s3
			}
			notes := mirrorDrift(claim, mg)
			if diff := cmp.Diff(tc.notes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			got := meta.FindStatusCondition(claim.Status.Conditions, common.TypeDrifted)
			if got != nil {
				got = drifted(got.Status, got.Reason, got.Message)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("claim's Drifted (-want +got):\n%s", diff)
			}
		})
	}
}

// TestForwardRequest: a claim's terraplane.io/requested-at reaches its resource once; the
// resource's other annotations stay.
func TestForwardRequest(t *testing.T) {
	for name, tc := range map[string]struct {
		claimAnn, mgAnn, want map[string]string
	}{
		"new request":       {map[string]string{common.RequestedAtAnnotation: "t2"}, map[string]string{"keep": "x", common.RequestedAtAnnotation: "t1"}, map[string]string{"keep": "x", common.RequestedAtAnnotation: "t2"}},
		"first request":     {map[string]string{common.RequestedAtAnnotation: "t1"}, nil, map[string]string{common.RequestedAtAnnotation: "t1"}},
		"already forwarded": {map[string]string{common.RequestedAtAnnotation: "t1"}, map[string]string{common.RequestedAtAnnotation: "t1"}, map[string]string{common.RequestedAtAnnotation: "t1"}},
		"no request":        {nil, map[string]string{common.RequestedAtAnnotation: "t1"}, map[string]string{common.RequestedAtAnnotation: "t1"}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s3 := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "bucket-uid-1", Annotations: tc.mgAnn}}
			r, c := bucketReconciler(t, s3)
			claim := bucketClaim("fast")
			claim.Annotations = tc.claimAnn
			mg := &awsstoragev1.S3Bucket{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(s3), mg); err != nil {
				t.Fatal(err)
			}
			if err := r.forwardRequest(ctx, claim, mg); err != nil {
				t.Fatal(err)
			}
			stored := &awsstoragev1.S3Bucket{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(s3), stored); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, stored.Annotations); diff != "" {
				t.Errorf("resource's annotations (-want +got):\n%s", diff)
			}
		})
	}
}
