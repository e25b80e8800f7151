package claim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// propagate copies the managed resource's connection Secret into the claim's namespace,
// into a Secret the claim controls (or makes).
func (r *Reconciler) propagate(ctx context.Context, claim resource.Claim, mg resource.Managed) error {
	if !resource.IsReady(mg.GetManagedStatus().Conditions) {
		return nil
	}
	to := claim.GetClaimSpec().WriteConnectionSecretToRef
	if to == nil {
		return nil
	}
	src, err := r.resourceSecret(ctx, mg)
	if err != nil {
		return err
	}
	dst := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: to.Name, Namespace: claim.GetNamespace()}}
	_, err = controllerutil.CreateOrUpdate(ctx, r.client, dst, func() error {
		if dst.ResourceVersion != "" && !resource.ControlledBy(dst, claim.GetUID()) { // it exists, and is not ours
			return connectionSecretConflict(dst)
		}
		dst.Type = src.Type
		dst.Data = src.Data
		return controllerutil.SetControllerReference(r.owner(claim), dst, r.client.Scheme())
	})
	if apierrors.IsAlreadyExists(err) {
		return r.unseenSecret(ctx, claim, dst, err)
	}
	if err != nil {
		return fmt.Errorf("write connection secret: %w", err)
	}
	return nil
}

// resourceSecret reads mg's connection Secret: only from a namespace mg may write to
// (its own, or its class's writeConnectionSecretsToNamespace), and only one mg wrote
// (resource.IsConnectionSecretOf); any other Secret the reference names is refused with
// ReferenceNotAllowed and never copied.
func (r *Reconciler) resourceSecret(ctx context.Context, mg resource.Managed) (*corev1.Secret, error) {
	kind, err := apiutil.GVKForObject(mg, r.client.Scheme()) // objects read back may carry no kind
	if err != nil {
		return nil, fmt.Errorf("kind of bound resource: %w", err)
	}
	from, ok, err := resource.CheckConnectionSecretRef(ctx, r.client, mg, r.classOf(kind))
	if u, user := resource.AsUserError(err); user {
		return nil, resource.UserErrorf(u.Reason, "%s %s/%s: %s", kind.Kind, mg.GetNamespace(), mg.GetName(), u.Message)
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, resource.UserErrorf("NoConnectionSecret", "%s %s/%s writes no connection Secret (its spec.writeConnectionSecretToRef is empty); an admin can set it",
			kind.Kind, mg.GetNamespace(), mg.GetName())
	}
	src := &corev1.Secret{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: from.Namespace, Name: from.Name}, src); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, resource.Waitf("ConnectionSecretPending", "waiting for connection Secret %s/%s", from.Namespace, from.Name)
		}
		return nil, fmt.Errorf("get connection secret: %w", err)
	}
	if !resource.IsConnectionSecretOf(src, mg.GetUID()) {
		return nil, resource.UserErrorf(common.ReasonReferenceNotAllowed,
			"%s %s/%s names Secret %s/%s in spec.writeConnectionSecretToRef, which it did not write, so it is not copied; name a Secret the resource writes",
			kind.Kind, mg.GetNamespace(), mg.GetName(), from.Namespace, from.Name)
	}
	return src, nil
}

// classOf is the class kind that makes resources of the managed kind gvk; zero for a
// kind that is not registered or has no classes.
func (r *Reconciler) classOf(gvk schema.GroupVersionKind) resource.ClassKind {
	if mk, ok := r.reg.Managed(gvk); ok {
		return mk.Class()
	}
	return resource.ClassKind{}
}

// unseenSecret explains a create that failed because the Secret exists although the
// cache does not show it: the cache may lag the claim's own create (look again shortly),
// or leave out the Secret altogether (Terraform state and saved plans), which is then
// not the claim's.
func (r *Reconciler) unseenSecret(ctx context.Context, claim resource.Claim, dst *corev1.Secret, createErr error) error {
	live := &corev1.Secret{}
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(dst), live); err != nil {
		return fmt.Errorf("read connection secret: %w", err)
	}
	if !resource.ControlledBy(live, claim.GetUID()) {
		return connectionSecretConflict(live)
	}
	return fmt.Errorf("write connection secret: %w", createErr)
}

// connectionSecretConflict is the user error of a connection Secret the claim does not
// control.
func connectionSecretConflict(s *corev1.Secret) error {
	return resource.UserErrorf(common.ReasonConnectionSecretConflict,
		"Secret %s (spec.writeConnectionSecretToRef) exists and is not controlled by this claim, so it is left as it is: name another Secret, or delete that one",
		s.Name)
}

// deleteConnectionSecret deletes the claim's connection Secret if the claim controls
// it; a Secret of that name that someone else made is left alone.
func (r *Reconciler) deleteConnectionSecret(ctx context.Context, claim resource.Claim) error {
	to := claim.GetClaimSpec().WriteConnectionSecretToRef
	if to == nil {
		return nil
	}
	s := &corev1.Secret{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: claim.GetNamespace(), Name: to.Name}, s); err != nil {
		return client.IgnoreNotFound(err) // a Secret the cache leaves out is never the claim's
	}
	if !resource.ControlledBy(s, claim.GetUID()) {
		return nil
	}
	if err := resource.DeleteExactly(ctx, r.client, s); err != nil {
		return fmt.Errorf("delete connection secret: %w", err)
	}
	return nil
}
