package resourcepool

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/resourcepool"
)

// TestPoolReady: a pool is Ready once size members are; else it says why: provisioning,
// held at maxSize, failed members, or the reconcile's own error while not full.
func TestPoolReady(t *testing.T) {
	spec := scalingv1.ResourcePoolSpec{Size: 3, MaxSize: ptr.To(int32(4))}
	failed := resource.Classify(resource.UserErrorf("InvalidTemplate", "no such kind"), resource.Retries{})
	ok := resource.Classify(nil, resource.Retries{})
	for _, tc := range []struct {
		name   string
		counts resourcepool.Counts
		held   string
		o      resource.Outcome
		want   string
	}{
		{"full", resourcepool.Counts{Ready: 3}, "", ok, "True/" + ReasonFull},
		{"full, even when the reconcile failed", resourcepool.Counts{Ready: 3}, "", failed, "True/" + ReasonFull},
		{"provisioning", resourcepool.Counts{Ready: 1, Provisioning: 2}, "", ok, "False/" + ReasonProvisioning},
		{"held at maxSize", resourcepool.Counts{Ready: 1, HandedOut: 3}, resourcepool.ReasonAtMaxSize, ok, "False/" + resourcepool.ReasonAtMaxSize},
		{"failed members", resourcepool.Counts{Ready: 2, Failed: 1}, "", ok, "False/" + ReasonMembersFailed},
		{"the reconcile's error first", resourcepool.Counts{Ready: 1}, "", failed, "False/InvalidTemplate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &pass{pool: &scalingv1.ResourcePool{Spec: spec}, counts: tc.counts, decision: resourcepool.Decision{Held: tc.held}}
			r, set := p.ready(tc.o, []metav1.Condition{})
			if got := string(r.Status) + "/" + r.Reason; !set || got != tc.want {
				t.Errorf("Ready %s (set %v), want %s", got, set, tc.want)
			}
		})
	}
}
