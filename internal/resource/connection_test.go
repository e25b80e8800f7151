package resource

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

func connectionScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := terraformv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConnectionSecretOnlyIfOurs: a managed resource writes and deletes its connection
// Secret only when it wrote it (label or owner reference); a Secret someone else made
// under that name is a ConnectionSecretConflict and is left as it is.
func TestConnectionSecretOnlyIfOurs(t *testing.T) {
	ctx := context.Background()
	mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "m", UID: "mg-uid"}}
	mg.SetGroupVersionKind(terraformv1.GroupVersion.WithKind("Module"))
	mg.Spec.WriteConnectionSecretToRef = &common.SecretReference{Name: "conn"}
	foreign := func() *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "conn"}, Data: map[string][]byte{"password": []byte("hunter2")}}
	}
	ours := foreign()
	ours.Labels = map[string]string{ManagedLabel: "mg-uid"}
	owned := foreign()
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "terraform.terraplane.io/v1alpha1", Kind: "Module", Name: "m", UID: "mg-uid"}}
	other := foreign()
	other.Labels = map[string]string{ManagedLabel: "other-uid"}
	otherOwner := foreign()
	otherOwner.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "x-uid", Controller: ptrTo(true)}}

	for _, tc := range []struct {
		name     string
		existing *corev1.Secret
		ours     bool
	}{
		{"none yet", nil, true},
		{"labelled by this resource", ours, true},
		{"owned by this resource", owned, true},
		{"no owner, no label", foreign(), false},
		{"labelled by another resource", other, false},
		{"controlled by another object", otherOwner, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(connectionScheme(t))
			if tc.existing != nil {
				b = b.WithObjects(tc.existing.DeepCopy())
			}
			c := b.Build()
			err := WriteConnectionSecret(ctx, c, mg, ClassKind{}, map[string][]byte{"endpoint": []byte("e")})
			got := &corev1.Secret{}
			if getErr := c.Get(ctx, types.NamespacedName{Namespace: "team", Name: "conn"}, got); getErr != nil {
				t.Fatal(getErr)
			}
			if tc.ours {
				if err != nil {
					t.Fatalf("WriteConnectionSecret: %v", err)
				}
				if string(got.Data["endpoint"]) != "e" || got.Labels[ManagedLabel] != "mg-uid" {
					t.Errorf("not written: %+v", got)
				}
			} else {
				if u, ok := AsUserError(err); !ok || u.Reason != common.ReasonConnectionSecretConflict {
					t.Fatalf("WriteConnectionSecret = %v, want a %s user error", err, common.ReasonConnectionSecretConflict)
				}
				if string(got.Data["password"]) != "hunter2" || got.Data["endpoint"] != nil || got.Labels[ManagedLabel] == "mg-uid" {
					t.Errorf("a foreign Secret was changed: %+v", got)
				}
			}
			if err := DeleteConnectionSecret(ctx, c, mg); err != nil {
				t.Fatalf("DeleteConnectionSecret: %v", err)
			}
			err = c.Get(ctx, client.ObjectKeyFromObject(got), got)
			if gone := err != nil; gone != tc.ours {
				t.Errorf("after DeleteConnectionSecret the Secret is gone: %v, want %v", gone, tc.ours)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
