package claim

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
)

// TestPendingRefs: a copy without the resourceRef just written is stale; the copy that
// shows it, or a new claim of the same name, is not, and clears the record.
func TestPendingRefs(t *testing.T) {
	var p pendingRefs
	claim := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "u1"}}
	p.add(claim)
	if p.stale(claim) {
		t.Fatal("no resourceRef written: not stale")
	}
	written := claim.DeepCopy()
	written.Spec.ResourceRef = &common.ObjectReference{Name: "m"}
	p.add(written)
	if !p.stale(claim.DeepCopy()) {
		t.Error("a copy without resourceRef after the write is stale")
	}
	other := claim.DeepCopy()
	other.UID = "u2"
	if p.stale(other) {
		t.Error("a new claim of the same name is not stale")
	}
	p.add(written)
	if p.stale(written) || p.stale(claim) {
		t.Error("once the cache shows resourceRef, the record is gone")
	}
	p.add(written)
	p.forget(client.ObjectKeyFromObject(claim))
	if p.stale(claim) {
		t.Error("a forgotten claim is not stale")
	}
}
