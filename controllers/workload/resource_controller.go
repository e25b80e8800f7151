package workload

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/controllers/kubernetes"
	"terraplane.io/terraplane/internal/resource"
)

// ResourceReconciler submits KubernetesApplicationResources to their target clusters.
type ResourceReconciler struct {
	client   client.Client
	targets  *kubernetes.Targets
	opts     kubernetes.Options
	recorder resource.Recorder
}

// setupResources registers the KubernetesApplicationResource controller.
func setupResources(mgr ctrl.Manager, targets *kubernetes.Targets, opts kubernetes.Options) error {
	r := &ResourceReconciler{client: mgr.GetClient(), targets: targets, opts: opts,
		recorder: resource.NewRecorder(mgr, "terraplane-workload")}
	return ctrl.NewControllerManagedBy(mgr).
		Named("kubernetesapplicationresource").
		For(&workloadv1.KubernetesApplicationResource{}).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.forSecret)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Complete(r)
}

// Reconcile makes the remote object match the resource's template, or removes it.
func (r *ResourceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res := &workloadv1.KubernetesApplicationResource{}
	if err := r.client.Get(ctx, req.NamespacedName, res); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.RemoteTimeout)
	defer cancel()
	if !res.DeletionTimestamp.IsZero() {
		return r.finish(ctx, res.DeepCopy(), res, r.delete(ctx, res))
	}
	if err := resource.AddFinalizer(ctx, r.client, res); err != nil {
		return ctrl.Result{}, err
	}
	// orig is taken before submit records what it wrote (status.clusterRef, the remote
	// status), so the status write carries that too
	return r.finish(ctx, res.DeepCopy(), res, r.submit(ctx, res))
}

// forSecret maps a local Secret to the resources in its namespace that propagate it.
func (r *ResourceReconciler) forSecret(ctx context.Context, s client.Object) []reconcile.Request {
	list := &workloadv1.KubernetesApplicationResourceList{}
	if err := r.client.List(ctx, list, client.InNamespace(s.GetNamespace())); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, res := range list.Items {
		for _, ref := range res.Spec.Secrets {
			if ref.Name == s.GetName() {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&res)})
			}
		}
	}
	return reqs
}
