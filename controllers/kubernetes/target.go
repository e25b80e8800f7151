package kubernetes

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// Targets resolves a ClusterReference into a client of the cluster it names.
type Targets struct {
	// Local reads claims, ProviderConfigs and Secrets in the control cluster.
	Local client.Client
	// Cache holds the clients of target clusters.
	Cache *remote.Cache
}

// Cluster returns a client of the cluster ref names; ns is the referrer's namespace.
func (t *Targets) Cluster(ctx context.Context, ns string, ref workloadv1.ClusterReference) (*remote.Cluster, error) {
	key, err := t.CredentialsSecret(ctx, ns, ref)
	if err != nil {
		return nil, err
	}
	cluster, err := t.Cache.Cluster(ctx, key)
	if u, ok := resource.AsUserError(err); ok && u.Reason == "CredentialsNotFound" && ref.Kind == workloadv1.ClusterKindClaim {
		return nil, resource.Waitf("WaitingForCredentials", "KubernetesCluster %s/%s: %s", key.Namespace, ref.Name, u.Message)
	}
	return cluster, err
}

// CredentialsSecret names the Secret that holds the credentials of the cluster ref names.
func (t *Targets) CredentialsSecret(ctx context.Context, ns string, ref workloadv1.ClusterReference) (types.NamespacedName, error) {
	if ref.Namespace != "" {
		ns = ref.Namespace
	}
	key := types.NamespacedName{Namespace: ns, Name: ref.Name}
	switch ref.Kind {
	case workloadv1.ClusterKindClaim:
		claim := &computev1.KubernetesCluster{}
		if err := t.Local.Get(ctx, key, claim); err != nil {
			return key, notFound(err, "KubernetesCluster", key)
		}
		return ClaimSecret(claim)
	case workloadv1.ClusterKindProviderConfig:
		pc := &kubernetesv1.ProviderConfig{}
		if err := t.Local.Get(ctx, key, pc); err != nil {
			return key, notFound(err, "ProviderConfig", key)
		}
		return ProviderConfigSecret(pc), nil
	}
	return key, resource.UserErrorf("UnknownClusterKind", "cluster kind %q is neither KubernetesCluster nor ProviderConfig", ref.Kind)
}

// ClaimSecret names the connection Secret of a Bound, Ready KubernetesCluster claim.
func ClaimSecret(claim *computev1.KubernetesCluster) (types.NamespacedName, error) {
	key := types.NamespacedName{Namespace: claim.Namespace}
	if claim.Status.BindingPhase != common.BindingPhaseBound || !resource.IsReady(claim.Status.Conditions) {
		return key, resource.Waitf("ClusterNotReady", "KubernetesCluster %s/%s is not Bound and Ready yet", claim.Namespace, claim.Name)
	}
	ref := claim.Spec.WriteConnectionSecretToRef
	if ref == nil {
		return key, resource.UserErrorf("NoConnectionSecret", "KubernetesCluster %s/%s has no spec.writeConnectionSecretToRef, so its credentials cannot be found", claim.Namespace, claim.Name)
	}
	key.Name = ref.Name
	return key, nil
}

// ProviderConfigSecret names the credentials Secret of a ProviderConfig.
func ProviderConfigSecret(pc *kubernetesv1.ProviderConfig) types.NamespacedName {
	ref := pc.Spec.CredentialsSecretRef
	key := types.NamespacedName{Namespace: pc.Namespace, Name: ref.Name}
	if ref.Namespace != "" {
		key.Namespace = ref.Namespace
	}
	return key
}

func notFound(err error, kind string, key types.NamespacedName) error {
	if apierrors.IsNotFound(err) {
		return resource.UserErrorf("ClusterNotFound", "%s %s does not exist", kind, key)
	}
	return fmt.Errorf("get %s %s: %w", kind, key, err)
}
