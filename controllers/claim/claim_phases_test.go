package claim

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestDestroyBlocked: a deleted claim waits for its resource's destroy, and says why when
// that destroy fails; a failure from before the deletion does not count.
func TestDestroyBlocked(t *testing.T) {
	module := func(syncedGen int64, status metav1.ConditionStatus) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "m", Generation: 3}}
		m.SetGroupVersionKind(terraformv1.GroupVersion.WithKind("Module"))
		m.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: status, ObservedGeneration: syncedGen,
			Reason: "ProviderNotFound", Message: "cannot delete: ProviderConfig admin/p does not exist"}}
		return m
	}
	err := destroyBlocked(module(3, metav1.ConditionFalse))
	u, ok := resource.AsUserError(err)
	if !ok || u.Reason != ReasonDeletionBlocked {
		t.Fatalf("a failing destroy: got %v, want a %s user error", err, ReasonDeletionBlocked)
	}
	if want := "this claim is deleted once Module admin/m is destroyed, and that fails (ProviderNotFound): cannot delete: ProviderConfig admin/p does not exist"; u.Message != want {
		t.Errorf("message %q, want %q", u.Message, want)
	}
	for name, m := range map[string]*terraformv1.Module{
		"destroy under way":         module(3, metav1.ConditionTrue),
		"failure before the delete": module(2, metav1.ConditionFalse),
	} {
		if _, waiting := resource.AsWaiting(destroyBlocked(m)); !waiting {
			t.Errorf("%s: got %v, want waiting", name, destroyBlocked(m))
		}
	}
}
