package scheduler

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestSelectedClusterNeedsConsent: a claim's selected-cluster annotation may name a
// ProviderConfig in another namespace only when it consents, and a KubernetesCluster
// claim only in the claim's own namespace; otherwise its labels are not read.
func TestSelectedClusterNeedsConsent(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, kubernetesv1.AddToScheme, computev1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"region": "eu"}
	closed := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "closed", Labels: labels}}
	open := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "open", Labels: labels}}
	open.Spec.AllowedNamespaces = &common.AllowedNamespaces{Names: []string{"apps"}}
	claim := &computev1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "eu", Labels: labels}}
	f := FirstConsumers{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(closed, open, claim).Build()}
	for _, tc := range []struct {
		selected string
		allowed  bool
	}{
		{"ProviderConfig/clusters/closed", false},
		{"ProviderConfig/clusters/open", true},
		{"KubernetesCluster/clusters/eu", false},
	} {
		t.Run(tc.selected, func(t *testing.T) {
			ref, got, err := f.Cluster(context.Background(), "apps", "db", tc.selected)
			if tc.allowed {
				if err != nil || ref != tc.selected || got["region"] != "eu" {
					t.Errorf("Cluster = %q, %v, %v; want %q with its labels", ref, got, err, tc.selected)
				}
				return
			}
			if u, ok := resource.AsUserError(err); !ok || u.Reason != common.ReasonReferenceNotAllowed || got != nil {
				t.Errorf("Cluster = %q, %v, %v; want a %s user error", ref, got, err, common.ReasonReferenceNotAllowed)
			}
		})
	}
}
