package stack

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// uninstall removes the Stack (whose finalizer removes the controller and RBAC), then the
// modules and classes, then every owned CRD that holds no custom resources; CRDs with
// custom resources, and module ConfigMaps that Modules use, are kept so that no user data
// is lost and no Terraform resource is stranded.
func (r *InstallReconciler) uninstall(ctx context.Context, in *install) error {
	if !controllerutil.ContainsFinalizer(in.obj, Finalizer) {
		return nil
	}
	st := in.obj.GetInstallStatus()
	gone, err := r.deleteStack(ctx, in)
	if err != nil {
		return err
	}
	if !gone {
		return resource.Waitf(stacksv1.ReasonUninstalling, "waiting for Stack %s/%s, its controller and RBAC to be removed", in.obj.StackNamespace(), in.obj.GetName())
	}
	keptModules, err := r.deleteObjects(ctx, in, st.InstalledObjects)
	if err != nil {
		return err
	}
	if len(keptModules) > 0 {
		r.recorder.Eventf(in.obj, corev1.EventTypeNormal, stacksv1.ReasonKeptModules, "kept %s: Modules still use them; delete those, then the ConfigMaps", strings.Join(keptModules, ", "))
	}
	kept, err := r.removeCRDs(ctx, in, st.InstalledCRDs)
	if err != nil {
		return err
	}
	if len(kept) > 0 {
		r.recorder.Eventf(in.obj, corev1.EventTypeNormal, stacksv1.ReasonKeptCRDs, "kept CRDs %s: custom resources of them remain; delete those, then the CRDs", strings.Join(kept, ", "))
	}
	controllerutil.RemoveFinalizer(in.obj, Finalizer)
	if err := client.IgnoreNotFound(r.client.Update(ctx, in.obj)); err != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	return nil
}

// deleteStack deletes this install's Stack and reports whether it is gone.
func (r *InstallReconciler) deleteStack(ctx context.Context, in *install) (bool, error) {
	s := &stacksv1.Stack{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: in.obj.StackNamespace(), Name: in.obj.GetName()}, s)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("get stack: %w", err)
	}
	if s.Annotations[stacksv1.AnnotationOwner] != in.obj.OwnerKey() {
		return true, nil // not ours
	}
	if s.DeletionTimestamp.IsZero() {
		if err := client.IgnoreNotFound(r.client.Delete(ctx, s)); err != nil {
			return false, fmt.Errorf("delete stack: %w", err)
		}
	}
	return false, nil
}
