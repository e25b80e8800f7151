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
	src := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "m-conn", Labels: map[string]string{resource.ManagedLabel: "mg-uid"}},
		Data: map[string][]byte{"endpoint": []byte("e")}}
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
			r := &Reconciler{client: c, reader: c, reg: kinds.NewRegistry(nil), kind: &registry.ClaimKind{GVK: gvk}}
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

// TestConnectionSecretCopiedOnlyFromResource: a claim copies its resource's connection
// Secret only from a namespace the resource may write to (its own, or its class's
// writeConnectionSecretsToNamespace) and only when the resource wrote it (its UID label or
// owner reference); anything else its reference names, such as the admin's credentials, is
// ReferenceNotAllowed and nothing reaches the claim's namespace.
func TestConnectionSecretCopiedOnlyFromResource(t *testing.T) {
	ctx := context.Background()
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "loot", UID: "claim-uid",
		Finalizers: []string{resource.Finalizer}}}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "loot"}
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "shared"}}
	class.SpecTemplate.WriteConnectionSecretsToNamespace = "shared"
	source := func(ns string, labels map[string]string, owners ...metav1.OwnerReference) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "conn", Labels: labels, OwnerReferences: owners},
			Data: map[string][]byte{"aws_secret_access_key": []byte("admin's")}}
	}
	ours := map[string]string{resource.ManagedLabel: "mg-uid"}
	ownedByMG := metav1.OwnerReference{APIVersion: "terraform.terraplane.io/v1alpha1", Kind: "Module", Name: "m", UID: "mg-uid"}
	viaClass := &common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "shared"}

	for name, tc := range map[string]struct {
		src    *corev1.Secret
		class  *common.ClassReference
		copied bool
	}{
		"written by the resource, its namespace":            {src: source("tenant-a", ours), copied: true},
		"owned by the resource, its namespace":              {src: source("tenant-a", nil, ownedByMG), copied: true},
		"written by the resource, its class's":              {src: source("shared", ours), class: viaClass, copied: true},
		"not written by the resource, its namespace":        {src: source("tenant-a", nil)},
		"labelled by another resource":                      {src: source("tenant-a", map[string]string{resource.ManagedLabel: "other"})},
		"the admin's namespace":                             {src: source("terraplane-system", nil)},
		"the admin's namespace, labelled as the resource's": {src: source("terraplane-system", ours)},
		"another tenant's, no class":                        {src: source("shared", ours)},
	} {
		t.Run(name, func(t *testing.T) {
			mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "m", UID: "mg-uid"}} // no kind, as read back
			mg.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: "conn", Namespace: tc.src.Namespace}
			mg.Spec.ClassRef = tc.class
			mg.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: "Available"}}
			reg := kinds.NewRegistry(nil)
			c := fake.NewClientBuilder().WithScheme(reg.Scheme()).WithObjects(claim.DeepCopy(), class.DeepCopy(), tc.src.DeepCopy()).Build()
			kind, _ := reg.Claim(kinds.PostgreSQLInstanceGVK)
			r := &Reconciler{client: c, reader: c, reg: reg, kind: kind}

			err := r.propagate(ctx, claim.DeepCopy(), mg)
			got := &corev1.Secret{}
			getErr := c.Get(ctx, types.NamespacedName{Namespace: "tenant-a", Name: "loot"}, got)
			if tc.copied {
				if err != nil || getErr != nil || string(got.Data["aws_secret_access_key"]) != "admin's" {
					t.Fatalf("not copied: propagate %v, get %v, %+v", err, getErr, got.Data)
				}
				return
			}
			if u, ok := resource.AsUserError(err); !ok || u.Reason != common.ReasonReferenceNotAllowed {
				t.Errorf("propagate = %v, want a %s user error", err, common.ReasonReferenceNotAllowed)
			}
			if getErr == nil {
				t.Errorf("copied into the claim's namespace: %+v", got.Data)
			}
		})
	}
}
