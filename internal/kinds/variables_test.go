package kinds

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestVariablesFromNamespaces: a Module reads variablesFrom Secrets in its own namespace,
// and in the namespace of the claim it is bound to when that claim names it back;
// anywhere else is ReferenceNotAllowed, and nothing is read.
func TestVariablesFromNamespaces(t *testing.T) {
	ctx := context.Background()
	claimGVK := databasev1.GroupVersion.WithKind("PostgreSQLInstance")
	claim := func(name string, resourceRef *common.ObjectReference) *databasev1.PostgreSQLInstance {
		c := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID("uid-" + name)}}
		c.Spec.ResourceRef = resourceRef
		return c
	}
	mine := &common.ObjectReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "Module", Namespace: "admin", Name: "m"}
	other := &common.ObjectReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "Module", Namespace: "admin", Name: "other"}
	objs := []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "s"}, Data: map[string][]byte{"k": []byte("admin-value")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "s"}, Data: map[string][]byte{"k": []byte("team-value")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "s"}, Data: map[string][]byte{"k": []byte("b-value")}},
		claim("bound", mine), claim("elsewhere", other), claim("pending", nil),
	}
	c := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(objs...).Build()
	boundTo := func(name string) *common.ObjectReference {
		return &common.ObjectReference{APIVersion: claimGVK.GroupVersion().String(), Kind: claimGVK.Kind, Namespace: "team-a", Name: name,
			UID: types.UID("uid-" + name)}
	}

	for _, tc := range []struct {
		name     string
		ns       string
		claimRef *common.ObjectReference
		want     string // the value read, or the reason of the error
	}{
		{"own namespace, implied", "", nil, "admin-value"},
		{"own namespace, named", "admin", nil, "admin-value"},
		{"another namespace", "team-b", nil, common.ReasonReferenceNotAllowed},
		{"the bound claim's namespace", "team-a", boundTo("bound"), "team-value"},
		{"a claim's namespace, not bound to it", "team-b", boundTo("bound"), common.ReasonReferenceNotAllowed},
		{"a claim that names another resource", "team-a", boundTo("elsewhere"), common.ReasonReferenceNotAllowed},
		{"a claim that does not exist", "team-a", &common.ObjectReference{APIVersion: claimGVK.GroupVersion().String(), Kind: claimGVK.Kind,
			Namespace: "team-a", Name: "nobody"}, common.ReasonReferenceNotAllowed},
		{"a claim of another UID", "team-a", &common.ObjectReference{APIVersion: claimGVK.GroupVersion().String(), Kind: claimGVK.Kind,
			Namespace: "team-a", Name: "bound", UID: "not-its-uid"}, common.ReasonReferenceNotAllowed},
		{"a claim that has not recorded its resource yet", "team-a", boundTo("pending"), "WaitingForClaim"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "m"}}
			m.Spec.ClaimRef = tc.claimRef
			m.Spec.VariablesFrom = []terraformv1.VariableFrom{{Name: "v", ValueFrom: terraformv1.VariableSource{
				SecretKeyRef: &terraformv1.SecretKeySelector{Name: "s", Key: "k", Namespace: tc.ns}}}}
			vars, err := resolveModuleVariables(ctx, c, m)
			if err == nil {
				if got := vars.Secret["v"]; got != tc.want {
					t.Errorf("read %q, want %s", got, tc.want)
				}
				return
			}
			reason := ""
			if u, ok := resource.AsUserError(err); ok {
				reason = u.Reason
			} else if w, ok := resource.AsWaiting(err); ok {
				reason = w.Reason
			}
			if reason != tc.want {
				t.Errorf("resolveModuleVariables: %v (reason %q), want %s", err, reason, tc.want)
			}
		})
	}
}
