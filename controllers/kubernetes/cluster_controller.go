package kubernetes

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// clusters is the Connector of kubernetes.terraplane.io Clusters: existing clusters
// whose credentials a bound KubernetesCluster claim hands on. A Cluster is never changed:
// observing it is all there is, and deleting it removes only its connection Secret.
type clusters struct {
	native
}

// setupClusters registers Clusters with the managed reconciler; a change to their
// ProviderConfig or its credentials reaches them at once.
func setupClusters(mgr ctrl.Manager, targets *Targets, opts Options) error {
	r := &clusters{native{client: mgr.GetClient(), targets: targets, opts: opts, recorder: resource.NewRecorder(mgr, "terraplane-kubernetes")}}
	k := r.managedKind("kubernetes-cluster", func() resource.Managed { return &kubernetesv1.Cluster{} },
		func() client.ObjectList { return &kubernetesv1.ClusterList{} }, r)
	k.Watches = []managed.Watch{{Object: &kubernetesv1.ProviderConfig{}, Map: r.forProviderConfig}, {Object: &corev1.Secret{}, Map: r.forCredentials, Metadata: true}}
	return managed.Setup(mgr, k)
}

// cluster is the External of one Cluster: its client and credentials Secret.
type cluster struct {
	r       *clusters
	cluster *remote.Cluster
	creds   types.NamespacedName
}

// Connect reaches the cluster the Cluster's ProviderConfig names.
func (r *clusters) Connect(ctx context.Context, mg resource.Managed) (managed.External, error) {
	c := mg.(*kubernetesv1.Cluster)
	ref := workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig}
	if c.Spec.ProviderRef != nil {
		ref.Name = c.Spec.ProviderRef.Name
	}
	key, err := r.targets.CredentialsSecret(ctx, c.Namespace, "spec.providerRef", ref)
	if err != nil {
		return nil, err
	}
	rc, err := r.targets.Cache.Cluster(ctx, key)
	if err != nil {
		return nil, err
	}
	return &cluster{r: r, cluster: rc, creds: key}, nil
}

// Observe asks the cluster for its version and passes its credentials on.
func (e *cluster) Observe(ctx context.Context, mg resource.Managed) (managed.Observation, error) {
	version, err := e.cluster.Ping()
	if err != nil {
		return managed.Observation{}, err
	}
	mg.(*kubernetesv1.Cluster).Status.AtProvider = kubernetesv1.ClusterObservation{Endpoint: e.cluster.Host, Version: version}
	creds := &corev1.Secret{}
	if err := e.r.client.Get(ctx, e.creds, creds); err != nil {
		return managed.Observation{}, fmt.Errorf("get credentials %s: %w", e.creds, err)
	}
	return managed.Observation{UpToDate: true, ConnectionDetails: clusterConnection(creds, e.cluster.Host)}, nil
}

// Apply is never asked for: a Cluster is always up to date.
func (e *cluster) Apply(context.Context, resource.Managed) (managed.Applied, error) {
	return managed.Applied{}, nil
}

// Delete removes the connection Secret; the cluster itself stays.
func (r *clusters) Delete(ctx context.Context, mg resource.Managed) error {
	return resource.DeleteConnectionSecret(ctx, r.client, mg)
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
func (r *clusters) forProviderConfig(ctx context.Context, pc client.Object) []reconcile.Request {
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
func (r *clusters) forCredentials(ctx context.Context, s client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	for _, pc := range providerConfigsUsing(ctx, r.client, s) {
		reqs = append(reqs, r.forProviderConfig(ctx, &pc)...)
	}
	return reqs
}
