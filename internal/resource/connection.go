package resource

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// WriteConnectionSecret writes data into mg's connection Secret, if mg has one: labelled
// with mg's UID, owned by mg when in its namespace, and never taken over from another
// resource (a *UserError).
func WriteConnectionSecret(ctx context.Context, c client.Client, mg Managed, data map[string][]byte) error {
	ref, ok := ConnectionSecretRef(mg)
	if !ok {
		return nil // nobody asked for connection details
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, c, s, func() error {
		if uid, ok := s.Labels[ManagedLabel]; ok && uid != string(mg.GetUID()) {
			return UserErrorf(common.ReasonConnectionSecretConflict, "Secret %s/%s belongs to another resource", s.Namespace, s.Name)
		}
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[ManagedLabel] = string(mg.GetUID())
		if s.CreationTimestamp.IsZero() {
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

// DeleteConnectionSecret deletes mg's connection Secret if mg wrote it.
func DeleteConnectionSecret(ctx context.Context, c client.Client, mg Managed) error {
	ref, ok := ConnectionSecretRef(mg)
	if !ok {
		return nil
	}
	s := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
		return client.IgnoreNotFound(err)
	}
	if s.Labels[ManagedLabel] != string(mg.GetUID()) {
		return nil
	}
	if err := client.IgnoreNotFound(c.Delete(ctx, s)); err != nil {
		return fmt.Errorf("delete connection secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return nil
}
