package resource

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// TestConnectionSecretNamespace: a managed resource keeps its connection Secret in its
// own namespace, or in the one its class (of its class kind, in its namespace) names in
// writeConnectionSecretsToNamespace; any other namespace is refused with
// ReferenceNotAllowed, and nothing is written there: a tenant's Module cannot plant a
// Secret in a namespace she cannot write to, nor overwrite one there.
func TestConnectionSecretNamespace(t *testing.T) {
	ctx := context.Background()
	moduleClass := ClassKind{GVK: terraformv1.GroupVersion.WithKind("ModuleClass"), New: func() NonPortableClass { return &terraformv1.ModuleClass{} }}
	class := func(ns, name, secretsTo string) *terraformv1.ModuleClass {
		c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		c.SpecTemplate.WriteConnectionSecretsToNamespace = secretsTo
		return c
	}
	classRef := func(kind, ns, name string) *common.ClassReference {
		return &common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: kind, Name: name, Namespace: ns}
	}
	classes := []client.Object{class("tenant-a", "shared", "shared"), class("tenant-a", "local", ""), class("admin", "central", "tenant-b")}

	for name, tc := range map[string]struct {
		secretNS string // spec.writeConnectionSecretToRef.namespace
		class    *common.ClassReference
		kind     ClassKind
		refused  bool
	}{
		"no namespace: its own":                        {secretNS: "", kind: moduleClass},
		"its own, named":                               {secretNS: "tenant-a", kind: moduleClass},
		"another, no class":                            {secretNS: "tenant-b", kind: moduleClass, refused: true},
		"the admin's, no class":                        {secretNS: "admin", kind: moduleClass, refused: true},
		"the one its class names":                      {secretNS: "shared", class: classRef("ModuleClass", "", "shared"), kind: moduleClass},
		"the one its class names, class ns named":      {secretNS: "shared", class: classRef("ModuleClass", "tenant-a", "shared"), kind: moduleClass},
		"another than its class names":                 {secretNS: "tenant-b", class: classRef("ModuleClass", "", "shared"), kind: moduleClass, refused: true},
		"another, its class names none":                {secretNS: "tenant-b", class: classRef("ModuleClass", "", "local"), kind: moduleClass, refused: true},
		"a class in another namespace":                 {secretNS: "tenant-b", class: classRef("ModuleClass", "admin", "central"), kind: moduleClass, refused: true},
		"a class of another kind":                      {secretNS: "shared", class: classRef("S3BucketClass", "", "shared"), kind: moduleClass, refused: true},
		"a class that is gone":                         {secretNS: "shared", class: classRef("ModuleClass", "", "gone"), kind: moduleClass, refused: true},
		"a kind without classes names the class's one": {secretNS: "shared", class: classRef("ModuleClass", "", "shared"), refused: true},
	} {
		t.Run(name, func(t *testing.T) {
			mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "m", UID: "mg-uid"}}
			mg.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: "conn", Namespace: tc.secretNS}
			mg.Spec.ClassRef = tc.class
			target := client.ObjectKey{Namespace: tc.secretNS, Name: "conn"}
			if target.Namespace == "" {
				target.Namespace = mg.Namespace
			}
			c := fake.NewClientBuilder().WithScheme(connectionScheme(t)).WithObjects(classes...).Build()

			_, _, checkErr := CheckConnectionSecretRef(ctx, c, mg, tc.kind)
			writeErr := WriteConnectionSecret(ctx, c, mg, tc.kind, map[string][]byte{"password": []byte("chosen")})
			got := &corev1.Secret{}
			getErr := c.Get(ctx, target, got)

			if !tc.refused {
				if checkErr != nil || writeErr != nil || getErr != nil {
					t.Fatalf("allowed: check %v, write %v, get %v", checkErr, writeErr, getErr)
				}
				return
			}
			for _, err := range []error{checkErr, writeErr} {
				if u, ok := AsUserError(err); !ok || u.Reason != common.ReasonReferenceNotAllowed {
					t.Errorf("got %v, want a %s user error", err, common.ReasonReferenceNotAllowed)
				}
			}
			if getErr == nil {
				t.Errorf("a refused Secret was written: %+v", got)
			}
		})
	}
}

// TestConnectionSecretElsewhereLeftAlone: a Secret of another namespace that a
// resource's reference names is neither overwritten nor deleted, even when that
// namespace has a Secret of the name (the admin's credentials, say).
func TestConnectionSecretElsewhereLeftAlone(t *testing.T) {
	ctx := context.Background()
	admin := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "aws-credentials"}, Data: map[string][]byte{"key": []byte("secret")}}
	mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "m", UID: "mg-uid"}}
	mg.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: "aws-credentials", Namespace: "admin"}
	c := fake.NewClientBuilder().WithScheme(connectionScheme(t)).WithObjects(admin.DeepCopy()).Build()

	if err := WriteConnectionSecret(ctx, c, mg, ClassKind{}, map[string][]byte{"key": []byte("chosen")}); err == nil {
		t.Error("WriteConnectionSecret into the admin's namespace succeeded")
	}
	if err := DeleteConnectionSecret(ctx, c, mg); err != nil {
		t.Fatalf("DeleteConnectionSecret: %v", err)
	}
	got := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(admin), got); err != nil {
		t.Fatalf("the admin's Secret is gone: %v", err)
	}
	if diff := cmp.Diff(admin.Data, got.Data); diff != "" || len(got.Labels) != 0 {
		t.Errorf("the admin's Secret changed (-want +got):\n%s labels %v", diff, got.Labels)
	}
}
