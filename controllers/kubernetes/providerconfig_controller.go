package kubernetes

import (
	"context"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

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
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.forSecret)).
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
	var cluster *remote.Cluster
	var version string
	key, err := ProviderConfigSecret(pc)
	if err == nil {
		cluster, err = r.targets.Cache.Cluster(ctx, key)
	}
	if err == nil {
		pc.Status.Endpoint = cluster.Host
		version, err = cluster.Ping()
	}
	return r.finish(ctx, pc, orig, version, err)
}

// finish records whether the cluster answered (Ready, Reachable, with its version) and
// writes the status, guarded: the usage controller writes InUse into the same
// conditions, and the lock keeps either write from undoing the other. It is a health
// check: any failure is retried like an unreachable cluster.
func (r *ProviderConfigReconciler) finish(ctx context.Context, pc, orig *kubernetesv1.ProviderConfig, version string, err error) (ctrl.Result, error) {
	retries := r.opts.Retries()
	retries.Success = providerConfigResync
	return resource.Finisher{Client: r.client, Guarded: true}.End(ctx, resource.Ending{Object: pc, Orig: orig,
		Conditions: &pc.Status.Conditions, Observed: &pc.Status.ObservedGeneration, Outcome: resource.Classify(err, retries),
		Ready:   resource.FromOutcome(resource.ReadyBecause(common.ReasonReachable, "Kubernetes "+version)),
		Applied: func(o resource.Outcome) bool { return o.Succeeded() && resource.IsReady(pc.Status.Conditions) },
		Status:  r.retryUnreachable})
}

// retryUnreachable retries any failure of the check like an unreachable cluster.
func (r *ProviderConfigReconciler) retryUnreachable(o *resource.Outcome) []resource.Note {
	if o.Err != nil {
		o.Requeue, o.Err = r.opts.UnreachableRetry, nil
	}
	return nil
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
		if key, err := ProviderConfigSecret(&pc); err == nil && key == client.ObjectKeyFromObject(s) {
			out = append(out, pc)
		}
	}
	return out
}
