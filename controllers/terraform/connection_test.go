package terraform

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestDestroyDeletesOnlyItsConnectionSecret: destroying a Module deletes the connection
// Secret it wrote, and no other Secret its spec.writeConnectionSecretToRef names, in its
// namespace or another (a tenant's Module naming the admin's credentials).
func TestDestroyDeletesOnlyItsConnectionSecret(t *testing.T) {
	for name, tc := range map[string]struct {
		secret  *corev1.Secret
		deleted bool
	}{
		"the one it wrote": {secret: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "net-conn",
			Labels: map[string]string{resource.ManagedLabel: "u-1"}}}, deleted: true},
		"one of its namespace it did not write": {secret: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "precious"}}},
		"the admin's credentials":               {secret: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "terraplane-system", Name: "aws-credentials"}}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t, func(m *terraformv1.Module) {
				m.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: tc.secret.Name, Namespace: tc.secret.Namespace}
			})
			tc.secret.Data = map[string][]byte{"key": []byte("value")}
			state := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: resource.StateSecretName(h.get()), Namespace: "platform"},
				Data: map[string][]byte{"tfstate": gzipped(t, oneResourceState)}}
			for _, o := range []client.Object{tc.secret, state} {
				if err := h.c.Create(ctx, o); err != nil {
					t.Fatal(err)
				}
			}
			if err := h.c.Delete(ctx, h.get()); err != nil {
				t.Fatal(err)
			}
			if _, err := h.r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "platform", Name: "net"}}); err != nil {
				t.Fatalf("reconcile: %v", err)
			}
			if got := h.calls(); got != "destroy" {
				t.Fatalf("deletion ran %q, want a destroy", got)
			}
			err := h.c.Get(ctx, client.ObjectKeyFromObject(tc.secret), &corev1.Secret{})
			if gone := err != nil; gone != tc.deleted {
				t.Errorf("Secret %s/%s deleted: %v, want %v (get: %v)", tc.secret.Namespace, tc.secret.Name, gone, tc.deleted, err)
			}
		})
	}
}
