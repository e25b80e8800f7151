package workload

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// ReasonReachable says a ProviderConfig's cluster answered.
const ReasonReachable = "Reachable"

// providerConfigResync is how often a ProviderConfig's cluster is asked again.
const providerConfigResync = 5 * time.Minute

// ProviderConfigReconciler reports whether a ProviderConfig's cluster answers.
type ProviderConfigReconciler struct {
	client  client.Client
	targets *Targets
	opts    Options
}

// setupProviderConfigs registers the kubernetes.terraplane.io ProviderConfig controller.
func setupProviderConfigs(mgr ctrl.Manager, targets *Targets, opts Options) error {
	r := &ProviderConfigReconciler{client: mgr.GetClient(), targets: targets, opts: opts}
	return ctrl.NewControllerManagedBy(mgr).
		Named("kubernetes-providerconfig").
		// status writes (users, by the usage controller) need no new look at the cluster
		For(&kubernetesv1.ProviderConfig{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.forSecret)).
		Complete(r)
}

// Reconcile builds (or reuses) the cluster's client and asks the cluster for its version.
func (r *ProviderConfigReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pc := &kubernetesv1.ProviderConfig{}
	if err := r.client.Get(ctx, req.NamespacedName, pc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	orig := pc.DeepCopy()
	ctx, cancel := context.WithTimeout(ctx, r.opts.RemoteTimeout)
	defer cancel()
	status, reason, msg, retry := metav1.ConditionTrue, ReasonReachable, "", providerConfigResync
	cluster, err := r.targets.Cache.Cluster(ctx, ProviderConfigSecret(pc))
	var version string
	if err == nil {
		pc.Status.Endpoint = cluster.Host
		version, err = cluster.Ping()
		msg = "Kubernetes " + version
	}
	if err != nil {
		o := classify(err, r.opts)
		status, reason, msg, retry = metav1.ConditionFalse, o.reason, o.message, o.requeue
		if o.retErr != nil {
			retry = r.opts.UnreachableRetry
		}
	}
	resource.SetCondition(&pc.Status.Conditions, pc.Generation, common.TypeReady, status, reason, msg)
	// The usage controller writes InUse into the same conditions: the lock keeps either
	// write from undoing the other.
	perr := r.client.Status().Patch(ctx, pc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsConflict(perr) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if perr != nil && !apierrors.IsNotFound(perr) {
		return ctrl.Result{}, fmt.Errorf("update status: %w", perr)
	}
	return ctrl.Result{RequeueAfter: retry}, nil
}

// forSecret maps a Secret to the ProviderConfigs whose credentials it holds.
func (r *ProviderConfigReconciler) forSecret(ctx context.Context, s client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, pc := range providerConfigsUsing(ctx, r.client, s) {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&pc)})
	}
	return reqs
}

// providerConfigsUsing lists the ProviderConfigs whose credentials are Secret s.
func providerConfigsUsing(ctx context.Context, c client.Client, s client.Object) []kubernetesv1.ProviderConfig {
	list := &kubernetesv1.ProviderConfigList{}
	if err := c.List(ctx, list); err != nil {
		return nil
	}
	var out []kubernetesv1.ProviderConfig
	for _, pc := range list.Items {
		if ProviderConfigSecret(&pc) == client.ObjectKeyFromObject(s) {
			out = append(out, pc)
		}
	}
	return out
}
