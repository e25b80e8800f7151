package claim

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestBoundResourceNotYetCached: a resource just created is read from the API server
// while the cache does not show it yet; only a resource the API server lacks too is
// reported missing (ResourceNotFound), as a user error.
func TestBoundResourceNotYetCached(t *testing.T) {
	made := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "data-x1"}}
	claim := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "data"}}
	claim.Spec.ResourceRef = &common.ObjectReference{APIVersion: awsstoragev1.GroupVersion.String(), Kind: "S3Bucket", Namespace: "team", Name: "data-x1"}
	for _, tc := range []struct {
		name        string
		live        []client.Object // what the API server holds; the cache holds nothing
		wantMissing bool
	}{
		{name: "created, not cached yet", live: []client.Object{made}},
		{name: "gone", wantMissing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := bucketReconcilerOver(t)
			r.reader = fake.NewClientBuilder().WithScheme(r.reg.Scheme()).WithObjects(tc.live...).Build()
			mg, err := r.boundResource(context.Background(), claim)
			u, isUser := resource.AsUserError(err)
			switch {
			case tc.wantMissing && (!isUser || u.Reason != "ResourceNotFound"):
				t.Fatalf("boundResource: %v, want the user error ResourceNotFound", err)
			case !tc.wantMissing && err != nil:
				t.Fatalf("boundResource: %v, want the resource the API server holds", err)
			case !tc.wantMissing && mg.GetName() != made.Name:
				t.Fatalf("boundResource = %s, want %s", mg.GetName(), made.Name)
			}
		})
	}
}
