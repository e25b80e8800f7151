package workload

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/controllers/kubernetes"
	"terraplane.io/terraplane/internal/resource"
)

// ApplicationReconciler keeps an application's KubernetesApplicationResources in step
// with its resourceTemplates.
type ApplicationReconciler struct {
	client   client.Client
	opts     kubernetes.Options
	recorder resource.Recorder
}

// setupApplications registers the KubernetesApplication controller.
func setupApplications(mgr ctrl.Manager, opts kubernetes.Options) error {
	r := &ApplicationReconciler{client: mgr.GetClient(), opts: opts, recorder: resource.NewRecorder(mgr, "terraplane-workload")}
	return ctrl.NewControllerManagedBy(mgr).
		Named("kubernetesapplication").
		For(&workloadv1.KubernetesApplication{}).
		Owns(&workloadv1.KubernetesApplicationResource{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Complete(r)
}

// Reconcile creates, updates and deletes the application's resources.
func (r *ApplicationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &workloadv1.KubernetesApplication{}
	if err := r.client.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		return r.finish(ctx, app, nil, r.delete(ctx, app))
	}
	if err := resource.AddFinalizer(ctx, r.client, app); err != nil {
		return ctrl.Result{}, err
	}
	if err := validate(app); err != nil {
		return r.finish(ctx, app, nil, err)
	}
	owned, err := r.owned(ctx, app)
	if err == nil && app.Status.ClusterRef != nil {
		err = r.sync(ctx, app, owned)
	}
	if err == nil {
		owned, err = r.prune(ctx, app, owned)
	}
	return r.finish(ctx, app, owned, err)
}

// Setup registers the workload.terraplane.io controllers: applications and their
// resources, which reach target clusters through targets.
func Setup(mgr ctrl.Manager, targets *kubernetes.Targets, opts kubernetes.Options) error {
	opts = opts.WithDefaults()
	if err := setupApplications(mgr, opts); err != nil {
		return err
	}
	return setupResources(mgr, targets, opts)
}
