package resource

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

func TestNamespaceAllowed(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{"tenant": "yes"}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-b"}},
	).Build()
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "yes"}}
	for _, tc := range []struct {
		name    string
		allowed *common.AllowedNamespaces
		from    string
		want    bool
	}{
		{"own namespace needs no consent", nil, "admin", true},
		{"no consent", nil, "team-a", false},
		{"empty consent", &common.AllowedNamespaces{}, "team-a", false},
		{"listed", &common.AllowedNamespaces{Names: []string{"team-a"}}, "team-a", true},
		{"not listed", &common.AllowedNamespaces{Names: []string{"team-a"}}, "team-b", false},
		{"star", &common.AllowedNamespaces{Names: []string{"*"}}, "team-b", true},
		{"selector matches", &common.AllowedNamespaces{Selector: selector}, "team-a", true},
		{"selector does not match", &common.AllowedNamespaces{Selector: selector}, "team-b", false},
		{"empty selector matches all", &common.AllowedNamespaces{Selector: &metav1.LabelSelector{}}, "team-b", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NamespaceAllowed(context.Background(), c, tc.allowed, "admin", tc.from)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("NamespaceAllowed = %v, want %v", got, tc.want)
			}
		})
	}
	err := CheckReference(context.Background(), c, nil, "spec.classRef", "S3BucketClass admin/fast", "admin", "team-b")
	if u, ok := AsUserError(err); !ok || u.Reason != common.ReasonReferenceNotAllowed {
		t.Errorf("CheckReference = %v, want a %s user error", err, common.ReasonReferenceNotAllowed)
	}
}
