package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	awsstoragev1 "terraplane.io/terraplane/apis/aws/storage/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
)

func TestNames(t *testing.T) {
	module := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "m"}}
	module.Spec.ProviderRef = &common.LocalReference{Name: "main"}
	module.Spec.ProviderConfigRefs = []common.LocalReference{{Name: "east"}, {Name: "west"}}
	bucket := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "b"}}
	bucket.Spec.ProviderRef = &common.LocalReference{Name: "minio"}
	static := &awsstoragev1.S3Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "none"}}
	placed := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"}}
	placed.Spec.TargetRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: "edge"}
	elsewhere := placed.DeepCopy()
	elsewhere.Spec.TargetRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: "edge", Namespace: "clusters"}
	onClaim := placed.DeepCopy()
	onClaim.Spec.TargetRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Name: "edge"}
	for _, tc := range []struct {
		name  string
		names func(client.Object) []types.NamespacedName
		obj   client.Object
		want  []types.NamespacedName
	}{
		{"providerRef and providerConfigRefs", managedProviders, module, []types.NamespacedName{{Namespace: "admin", Name: "main"}, {Namespace: "admin", Name: "east"}, {Namespace: "admin", Name: "west"}}},
		{"providerRef", managedProviders, bucket, []types.NamespacedName{{Namespace: "admin", Name: "minio"}}},
		{"no provider", managedProviders, static, nil},
		{"placed on a ProviderConfig", targetProviderConfig, placed, []types.NamespacedName{{Namespace: "apps", Name: "edge"}}},
		{"placed on a ProviderConfig elsewhere", targetProviderConfig, elsewhere, []types.NamespacedName{{Namespace: "clusters", Name: "edge"}}},
		{"placed on a claim", targetProviderConfig, onClaim, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.names(tc.obj)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestInUse(t *testing.T) {
	two := []user{{"S3Bucket", "admin", "a"}, {"S3Bucket", "admin", "b"}}
	var many []user
	for i := range 12 {
		many = append(many, user{"Module", "admin", fmt.Sprintf("m%02d", i)})
	}
	for _, tc := range []struct {
		name     string
		users    []user
		deleting bool
		status   metav1.ConditionStatus
		reason   string
		message  string
	}{
		{"unused", nil, false, metav1.ConditionFalse, ReasonUnused, "nothing uses this Provider"},
		{"unused and deleting", nil, true, metav1.ConditionFalse, ReasonUnused, "nothing uses this Provider"},
		{"in use", two, false, metav1.ConditionTrue, ReasonInUse, "used by 2: S3Bucket admin/a, S3Bucket admin/b"},
		{"deletion waits", two, true, metav1.ConditionTrue, ReasonDeletionBlocked,
			"deletion waits until nothing uses this Provider; used by 2: S3Bucket admin/a, S3Bucket admin/b. Delete them (or their claims) first, or point them at another Provider"},
		{"at most ten named", many, false, metav1.ConditionTrue, ReasonInUse,
			"used by 12: Module admin/m00, Module admin/m01, Module admin/m02, Module admin/m03, Module admin/m04, Module admin/m05, Module admin/m06, Module admin/m07, Module admin/m08, Module admin/m09, and 2 more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, reason, message := inUse("Provider", tc.users, tc.deleting)
			if diff := cmp.Diff([]string{string(tc.status), tc.reason, tc.message}, []string{string(status), reason, message}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestUsersNeedConsent: an application resource in another namespace counts as a user of
// a ProviderConfig (holding its deletion) only when the ProviderConfig consents.
func TestUsersNeedConsent(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := workloadv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	placed := func(ns string) client.Object {
		res := &workloadv1.KubernetesApplicationResource{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
		res.Spec.TargetRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: "edge", Namespace: "clusters"}
		return res
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(placed("clusters"), placed("apps"), placed("other")).Build()
	r := &Reconciler{users: []userKind{{
		gvk:     workloadv1.GroupVersion.WithKind("KubernetesApplicationResource"),
		newList: func() client.ObjectList { return &workloadv1.KubernetesApplicationResourceList{} },
		names:   targetProviderConfig,
	}}}
	pc := &kubernetesv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "edge"}}
	for _, tc := range []struct {
		name    string
		allowed *common.AllowedNamespaces
		want    []string
	}{
		{"no consent: its own namespace only", nil, []string{"clusters"}},
		{"consent to apps", &common.AllowedNamespaces{Names: []string{"apps"}}, []string{"apps", "clusters"}},
		{"consent to all", &common.AllowedNamespaces{Names: []string{"*"}}, []string{"apps", "clusters", "other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc.Spec.AllowedNamespaces = tc.allowed
			users, err := r.usersOf(context.Background(), c, pc)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, u := range users {
				got = append(got, u.namespace)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("users' namespaces (-want +got):\n%s", diff)
			}
		})
	}
}
