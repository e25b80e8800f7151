package claim

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
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// TestConnectionSecretOnlyIfControlled: a claim copies its resource's connection details
// only into a Secret it controls (or makes), and its deletion deletes only such a
// Secret; a Secret someone else made under that name is a ConnectionSecretConflict and
// is left exactly as it was.
func TestConnectionSecretOnlyIfControlled(t *testing.T) {
	ctx := context.Background()
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "greedy", UID: "claim-uid",
		Finalizers: []string{resource.Finalizer}}}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "conn"}
	mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "m", UID: "mg-uid"}}
	mg.SetGroupVersionKind(terraformv1.GroupVersion.WithKind("Module"))
	mg.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: "m-conn"}
	mg.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: "Available"}}
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "m-conn"}, Data: map[string][]byte{"endpoint": []byte("e")}}
	gvk := databasev1.GroupVersion.WithKind("PostgreSQLInstance")
	secret := func(owner *metav1.OwnerReference) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "conn"}, Data: map[string][]byte{"password": []byte("hunter2")}}
		if owner != nil {
			s.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		return s
	}
	yes := true
	byClaim := &metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: claim.Name, UID: claim.UID, Controller: &yes}
	byOther := &metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: "other", UID: "other-uid", Controller: &yes}
	notController := &metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: claim.Name, UID: claim.UID}

	for _, tc := range []struct {
		name     string
		existing *corev1.Secret
		ours     bool
	}{
		{"none yet", nil, true},
		{"controlled by the claim", secret(byClaim), true},
		{"no owner", secret(nil), false},
		{"controlled by another claim", secret(byOther), false},
		{"owned, not controlled, by the claim", secret(notController), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := []client.Object{claim.DeepCopy(), src.DeepCopy()}
			if tc.existing != nil {
				objs = append(objs, tc.existing.DeepCopy())
			}
			c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(objs...).Build()
			r := &Reconciler{client: c, reader: c, kind: &registry.ClaimKind{GVK: gvk}}
			key := types.NamespacedName{Namespace: "team", Name: "conn"}

			err := r.propagate(ctx, claim.DeepCopy(), mg)
			got := &corev1.Secret{}
			if getErr := c.Get(ctx, key, got); getErr != nil {
				t.Fatal(getErr)
			}
			if tc.ours {
				if err != nil {
					t.Fatalf("propagate: %v", err)
				}
				if string(got.Data["endpoint"]) != "e" || got.Data["password"] != nil || !resource.ControlledBy(got, claim.UID) {
					t.Errorf("connection Secret not written as the claim's: %+v", got)
				}
			} else {
				if u, ok := resource.AsUserError(err); !ok || u.Reason != common.ReasonConnectionSecretConflict {
					t.Errorf("propagate = %v, want a %s user error", err, common.ReasonConnectionSecretConflict)
				}
				if string(got.Data["password"]) != "hunter2" || got.Data["endpoint"] != nil || len(got.OwnerReferences) != len(tc.existing.OwnerReferences) {
					t.Errorf("a foreign Secret was changed: %+v", got)
				}
			}

			deleting := &databasev1.PostgreSQLInstance{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(claim), deleting); err != nil {
				t.Fatal(err)
			}
			if err := r.delete(ctx, deleting); err != nil {
				t.Fatalf("delete: %v", err)
			}
			err = c.Get(ctx, key, got)
			if gone := err != nil; gone != tc.ours {
				t.Errorf("after the claim's deletion the Secret is gone: %v, want %v", gone, tc.ours)
			}
			if !tc.ours && string(got.Data["password"]) != "hunter2" {
				t.Errorf("a foreign Secret was changed: %+v", got)
			}
		})
	}
}
