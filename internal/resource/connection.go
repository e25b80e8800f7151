package resource

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// WriteConnectionSecret writes data into mg's connection Secret, if mg has one: labelled
// with mg's UID and owned by mg when in its namespace. A namespace mg may not write to
// (CheckConnectionSecretRef; class is mg's class kind) is a ReferenceNotAllowed user
// error; a Secret of that name that mg did not write (IsConnectionSecretOf) is left as it
// is, a ConnectionSecretConflict user error.
func WriteConnectionSecret(ctx context.Context, c client.Client, mg Managed, class ClassKind, data map[string][]byte) error {
	ref, ok, err := CheckConnectionSecretRef(ctx, c, mg, class)
	if err != nil || !ok {
		return err // refused, or nobody asked for connection details
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace}}
	_, err = controllerutil.CreateOrUpdate(ctx, c, s, func() error {
		if s.ResourceVersion != "" && !IsConnectionSecretOf(s, mg.GetUID()) {
			return UserErrorf(common.ReasonConnectionSecretConflict,
				"Secret %s/%s (spec.writeConnectionSecretToRef) exists and was not written by this resource, so it is left as it is; name another Secret, or delete that one",
				s.Namespace, s.Name)
		}
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[ManagedLabel] = string(mg.GetUID())
		if s.ResourceVersion == "" { // new
			s.Type = ConnectionSecretType
		}
		s.Data = data
		if ref.Namespace == mg.GetNamespace() {
			return controllerutil.SetOwnerReference(mg, s, c.Scheme())
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write connection secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return nil
}

// DeleteConnectionSecret deletes mg's connection Secret if mg wrote it; any other Secret
// of that name is left alone.
func DeleteConnectionSecret(ctx context.Context, c client.Client, mg Managed) error {
	ref, ok := ConnectionSecretRef(mg)
	if !ok {
		return nil
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !IsConnectionSecretOf(s, mg.GetUID()) {
		return nil
	}
	if err := DeleteExactly(ctx, c, s); err != nil {
		return fmt.Errorf("delete connection secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return nil
}

// IsConnectionSecretOf reports whether Secret s was written by the managed resource with
// uid: labelled with it (as every connection Secret is), or owned by it. Either mark can
// be set only by whoever may write the Secret anyway.
func IsConnectionSecretOf(s *corev1.Secret, uid types.UID) bool {
	if label, ok := s.Labels[ManagedLabel]; ok {
		return label == string(uid)
	}
	for _, o := range s.OwnerReferences {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// ControlledBy reports whether obj's controller owner reference names the object with uid.
func ControlledBy(obj metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == uid
}

// DeleteExactly deletes obj only if it is still the object read (same UID), so that a
// replacement made meanwhile under the same name is never deleted; gone already is fine.
func DeleteExactly(ctx context.Context, c client.Writer, obj client.Object) error {
	uid := obj.GetUID()
	return client.IgnoreNotFound(c.Delete(ctx, obj, client.Preconditions{UID: &uid}))
}
