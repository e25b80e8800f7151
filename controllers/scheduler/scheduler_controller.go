package scheduler

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Options configure the scheduler.
type Options struct {
	// Retry is how soon an unschedulable application is looked at again (watches on
	// clusters usually act first).
	Retry time.Duration
}

// Reconciler schedules KubernetesApplications.
type Reconciler struct {
	client   client.Client
	reader   client.Reader // uncached, so consecutive placements see each other
	opts     Options
	recorder resource.Recorder
}

// Setup registers the scheduler; one worker keeps placements consistent.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.Retry <= 0 {
		opts.Retry = 30 * time.Second
	}
	r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), opts: opts, recorder: resource.NewRecorder(mgr, "terraplane-scheduler")}
	return ctrl.NewControllerManagedBy(mgr).
		Named("scheduler").
		For(&workloadv1.KubernetesApplication{}).
		Watches(&computev1.KubernetesCluster{}, handler.EnqueueRequestsFromMapFunc(r.affected(workloadv1.ClusterKindClaim))).
		Watches(&kubernetesv1.ProviderConfig{}, handler.EnqueueRequestsFromMapFunc(r.affected(workloadv1.ClusterKindProviderConfig))).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(r)
}

// Reconcile places one unscheduled application, or places again one whose cluster
// turned unusable before anything was submitted to it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	app := &workloadv1.KubernetesApplication{}
	if err := r.client.Get(ctx, req.NamespacedName, app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !app.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	orig := app.DeepCopy()
	if app.Status.ClusterRef != nil {
		if moved, err := r.unplace(ctx, app); !moved || err != nil {
			return resource.Classify(err, r.retries()).Result()
		}
	}
	ref, why, err := r.place(ctx, app)
	return r.finish(ctx, app, orig, ref, why, err)
}

// affected maps a changed cluster to every application still waiting for one, and to
// those placed on it (which move if it turned unusable before they submitted anything).
func (r *Reconciler) affected(kind workloadv1.ClusterKind) handler.MapFunc {
	return func(ctx context.Context, cluster client.Object) []reconcile.Request {
		list := &workloadv1.KubernetesApplicationList{}
		if err := r.client.List(ctx, list); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for _, app := range list.Items {
			ref := app.Status.ClusterRef
			if ref == nil || (ref.Kind == kind && ref.Name == cluster.GetName() && refNamespace(app.Namespace, *ref) == cluster.GetNamespace()) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&app)})
			}
		}
		return reqs
	}
}
