package scheduler

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

func TestProviderConfigUnusable(t *testing.T) {
	pc := func(conds ...metav1.Condition) *kubernetesv1.ProviderConfig {
		p := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "edge"}}
		p.Status.Conditions = conds
		return p
	}
	deleted := pc(metav1.Condition{Type: common.TypeReady, Status: metav1.ConditionTrue})
	now := metav1.Now()
	deleted.DeletionTimestamp = &now
	for _, tc := range []struct {
		name string
		pc   *kubernetesv1.ProviderConfig
		want string
	}{
		{"reachable", pc(metav1.Condition{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: "Reachable"}), ""},
		{"not checked", pc(), "providerconfigs.kubernetes.terraplane.io ns/edge has not reached its cluster yet"},
		{"unreachable", pc(metav1.Condition{Type: common.TypeReady, Status: metav1.ConditionFalse, Reason: "CredentialsNotFound", Message: "Secret ns/x does not exist"}),
			"providerconfigs.kubernetes.terraplane.io ns/edge cannot reach its cluster: CredentialsNotFound: Secret ns/x does not exist"},
		{"deleted", deleted, "providerconfigs.kubernetes.terraplane.io ns/edge is being deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := providerConfigUnusable(tc.pc); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClaimUnusable(t *testing.T) {
	claim := func(phase common.BindingPhase, secret bool, conds ...metav1.Condition) *computev1.KubernetesCluster {
		c := &computev1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "prod"}}
		c.Status.BindingPhase = phase
		c.Status.Conditions = conds
		if secret {
			c.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "prod-conn"}
		}
		return c
	}
	ready := metav1.Condition{Type: common.TypeReady, Status: metav1.ConditionTrue}
	for _, tc := range []struct {
		name  string
		claim *computev1.KubernetesCluster
		want  string
	}{
		{"usable", claim(common.BindingPhaseBound, true, ready), ""},
		{"unbound", claim(common.BindingPhaseUnbound, true, ready), "KubernetesCluster ns/prod is not Bound"},
		{"no secret", claim(common.BindingPhaseBound, false, ready), "KubernetesCluster ns/prod has no connection Secret"},
		{"unreachable", claim(common.BindingPhaseBound, true, metav1.Condition{Type: common.TypeReady, Status: metav1.ConditionFalse, Reason: "ClusterUnreachable", Message: "no answer"}),
			"KubernetesCluster ns/prod is not Ready (ClusterUnreachable: no answer)"},
		{"not reported", claim(common.BindingPhaseBound, true), "KubernetesCluster ns/prod is not Ready (not reported yet)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := claimUnusable(tc.claim); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestUnschedulableOutcome: an Unschedulable ends a reconcile through resource.Classify as
// Scheduled=False (Unschedulable) with the reason in its message, retried after Retry.
func TestUnschedulableOutcome(t *testing.T) {
	r := &Reconciler{opts: Options{Retry: time.Minute}}
	o := resource.Classify(fmt.Errorf("place: %w", &Unschedulable{Reason: "NoMatchingCluster", Message: "no cluster matches"}), r.retries())
	want := resource.Outcome{Synced: metav1.ConditionFalse, Reason: ReasonUnschedulable, Message: "NoMatchingCluster: no cluster matches",
		EventType: corev1.EventTypeWarning, Requeue: time.Minute}
	if o != want {
		t.Errorf("got %+v, want %+v", o, want)
	}
}
