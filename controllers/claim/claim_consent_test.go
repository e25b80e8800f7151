package claim

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// TestCheckStatic: a claim binds an unbound resource in another namespace only when the
// resource is reserved for it or its allowedNamespaces admits the claim's namespace.
func TestCheckStatic(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"tier": "gold"}}}).Build()
	gvk := databasev1.GroupVersion.WithKind("PostgreSQLInstance")
	r := &Reconciler{client: c, reader: c, kind: &registry.ClaimKind{GVK: gvk}}
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "db"}}
	module := func(ns string, allowed *common.AllowedNamespaces, reserved bool) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m"}}
		m.SetGroupVersionKind(terraformv1.GroupVersion.WithKind("Module"))
		m.Spec.AllowedNamespaces = allowed
		if reserved {
			m.Spec.ClaimRef = &common.ObjectReference{Kind: gvk.Kind, Namespace: "team", Name: "db"}
		}
		return m
	}
	for _, tc := range []struct {
		name string
		mg   *terraformv1.Module
		ok   bool
	}{
		{"same namespace", module("team", nil, false), true},
		{"another namespace, no consent", module("admin", nil, false), false},
		{"another namespace, other names", module("admin", &common.AllowedNamespaces{Names: []string{"other"}}, false), false},
		{"another namespace, named", module("admin", &common.AllowedNamespaces{Names: []string{"team"}}, false), true},
		{"another namespace, selected", module("admin", &common.AllowedNamespaces{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "gold"}}}, false), true},
		{"another namespace, reserved for the claim", module("admin", nil, true), true},
	} {
		err := r.checkStatic(ctx, claim, tc.mg)
		if tc.ok && err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if u, isUser := resource.AsUserError(err); !tc.ok && (!isUser || u.Reason != common.ReasonReferenceNotAllowed) {
			t.Errorf("%s: got %v, want a %s user error", tc.name, err, common.ReasonReferenceNotAllowed)
		}
	}
}
