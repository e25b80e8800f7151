package kubernetes

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// ClusterReconciler serves kubernetes.terraplane.io Clusters: existing clusters whose
// credentials a bound KubernetesCluster claim hands on.
type ClusterReconciler struct {
	native
}

// setupClusters registers the Cluster controller.
func setupClusters(mgr ctrl.Manager, targets *Targets, opts Options) error {
	r := &ClusterReconciler{native{client: mgr.GetClient(), targets: targets, opts: opts, recorder: resource.NewRecorder(mgr, "terraplane-kubernetes")}}
	return ctrl.NewControllerManagedBy(mgr).
		Named("kubernetes-cluster").
		For(&kubernetesv1.Cluster{}).
		Watches(&kubernetesv1.ProviderConfig{}, handler.EnqueueRequestsFromMapFunc(r.forProviderConfig)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.forCredentials)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles}).
		Complete(r)
}

// Reconcile asks the cluster for its version and writes its credentials to the
// connection Secret; deletion removes only that Secret.
func (r *ClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	c := &kubernetesv1.Cluster{}
	if err := r.client.Get(ctx, req.NamespacedName, c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.RemoteTimeout)
	defer cancel()
	if !c.DeletionTimestamp.IsZero() {
		orig := c.DeepCopy()
		err := resource.DeleteConnectionSecret(ctx, r.client, c)
		if err == nil {
			err = resource.RemoveFinalizer(ctx, r.client, c)
		}
		return r.finish(ctx, orig, c, err)
	}
	if err := resource.AddFinalizer(ctx, r.client, c); err != nil {
		return ctrl.Result{}, err
	}
	return r.finish(ctx, c.DeepCopy(), c, r.observe(ctx, c))
}

// observe reaches the cluster and passes its credentials on.
func (r *ClusterReconciler) observe(ctx context.Context, c *kubernetesv1.Cluster) error {
	ref := workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig}
	if c.Spec.ProviderRef != nil {
		ref.Name = c.Spec.ProviderRef.Name
	}
	key, err := r.targets.CredentialsSecret(ctx, c.Namespace, ref)
	if err != nil {
		return err
	}
	cluster, err := r.targets.Cache.Cluster(ctx, key)
	if err != nil {
		return err
	}
	version, err := cluster.Ping()
	if err != nil {
		return err
	}
	c.Status.AtProvider = kubernetesv1.ClusterObservation{Endpoint: cluster.Host, Version: version}
	creds := &corev1.Secret{}
	if err := r.client.Get(ctx, key, creds); err != nil {
		return fmt.Errorf("get credentials %s: %w", key, err)
	}
	return resource.WriteConnectionSecret(ctx, r.client, c, clusterConnection(creds, cluster.Host))
}

// clusterConnection is the connection Secret of a cluster: the credentials' keys of
// DESIGN.md §1, with the endpoint and CA of ServiceAccount token Secrets filled in.
func clusterConnection(creds *corev1.Secret, host string) map[string][]byte {
	out := map[string][]byte{}
	for _, k := range []string{remote.KeyKubeconfig, remote.KeyEndpoint, remote.KeyClusterCA, remote.KeyClientCert,
		remote.KeyClientKey, remote.KeyToken, remote.KeyUsername, remote.KeyPassword} {
		if v, ok := creds.Data[k]; ok {
			out[k] = v
		}
	}
	if _, ok := out[remote.KeyClusterCA]; !ok && len(creds.Data[remote.KeyServiceCA]) > 0 {
		out[remote.KeyClusterCA] = creds.Data[remote.KeyServiceCA]
	}
	if _, ok := out[remote.KeyKubeconfig]; !ok && len(out[remote.KeyEndpoint]) == 0 {
		out[remote.KeyEndpoint] = []byte(host)
	}
	return out
}

// forProviderConfig maps a ProviderConfig to the Clusters that name it.
func (r *ClusterReconciler) forProviderConfig(ctx context.Context, pc client.Object) []reconcile.Request {
	list := &kubernetesv1.ClusterList{}
	if err := r.client.List(ctx, list, client.InNamespace(pc.GetNamespace())); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, c := range list.Items {
		if c.Spec.ProviderRef != nil && c.Spec.ProviderRef.Name == pc.GetName() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
		}
	}
	return reqs
}

// forCredentials maps a Secret to the Clusters whose ProviderConfig holds it, so that
// rotated credentials reach the connection Secret at once.
func (r *ClusterReconciler) forCredentials(ctx context.Context, s client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, pc := range providerConfigsUsing(ctx, r.client, s) {
		reqs = append(reqs, r.forProviderConfig(ctx, &pc)...)
	}
	return reqs
}
