package kubernetes

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// ObjectReconciler manages kubernetes.terraplane.io Objects: Kubernetes objects in a
// target cluster treated as external resources (the seed's native connecter).
type ObjectReconciler struct {
	native
}

// setupObjects registers the Object controller.
func setupObjects(mgr ctrl.Manager, targets *Targets, opts Options) error {
	r := &ObjectReconciler{native{client: mgr.GetClient(), targets: targets, opts: opts, recorder: resource.NewRecorder(mgr, "terraplane-kubernetes")}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("kubernetes-object").
		For(&kubernetesv1.Object{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Complete(r)
}

// Reconcile applies the manifest, reads status and connection details back, or deletes
// the remote object per the reclaim policy.
func (r *ObjectReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o := &kubernetesv1.Object{}
	if err := r.client.Get(ctx, req.NamespacedName, o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.RemoteTimeout)
	defer cancel()
	if !o.DeletionTimestamp.IsZero() {
		return r.finish(ctx, o.DeepCopy(), o, r.deleteObject(ctx, o))
	}
	if err := resource.AddFinalizer(ctx, r.client, o); err != nil {
		return ctrl.Result{}, err
	}
	return r.finish(ctx, o.DeepCopy(), o, r.observe(ctx, o))
}

// deleteObject removes the remote object unless the policy retains it, then the finalizer.
func (r *ObjectReconciler) deleteObject(ctx context.Context, o *kubernetesv1.Object) error {
	if o.Spec.ReclaimPolicy != common.ReclaimRetain {
		cluster, err := r.targets.Cluster(ctx, o.Namespace, r.target(o))
		if _, user := resource.AsUserError(err); user {
			r.recorder.Eventf(o, corev1.EventTypeWarning, "RemoteObjectLeft", "the target cluster is unavailable (%v); nothing to delete there", err)
		} else if err != nil {
			return err
		} else if obj, err := o.Spec.ForProvider.Manifest.Object(); err == nil {
			if err := DeleteRemote(ctx, cluster, o.UID, obj); err != nil {
				return err
			}
		}
	}
	if err := resource.DeleteConnectionSecret(ctx, r.client, o); err != nil {
		return err
	}
	return resource.RemoveFinalizer(ctx, r.client, o)
}

// target is the ProviderConfig the Object names.
func (r *ObjectReconciler) target(o *kubernetesv1.Object) workloadv1.ClusterReference {
	ref := workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig}
	if o.Spec.ProviderRef != nil {
		ref.Name = o.Spec.ProviderRef.Name
	}
	return ref
}
