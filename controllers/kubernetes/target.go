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
	// Cache holds the clients of target clusters: a *remote.Cache.
	Cache ClusterSource
}

// ClusterSource gives the client of the cluster whose credentials a Secret holds. A
// *remote.Cache is the one there is; unit tests put a fake cluster in its place.
type ClusterSource interface {
	// Cluster returns a client of the cluster the credentials Secret key describes.
	Cluster(ctx context.Context, key types.NamespacedName) (*remote.Cluster, error)
}

// Cluster returns a client of the cluster ref names; ns is the referrer's namespace and
// field the referrer's field that holds ref (for messages).
func (t *Targets) Cluster(ctx context.Context, ns, field string, ref workloadv1.ClusterReference) (*remote.Cluster, error) {
	key, err := t.CredentialsSecret(ctx, ns, field, ref)
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
// A reference into another namespace than ns is followed only when its target consents:
// a ProviderConfig through spec.allowedNamespaces, a KubernetesCluster claim never.
func (t *Targets) CredentialsSecret(ctx context.Context, ns, field string, ref workloadv1.ClusterReference) (types.NamespacedName, error) {
	key := types.NamespacedName{Namespace: ns, Name: ref.Name}
	if ref.Namespace != "" {
		key.Namespace = ref.Namespace
	}
	switch ref.Kind {
	case workloadv1.ClusterKindClaim:
		if err := CheckClaim(key, field, ns); err != nil {
			return key, err
		}
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
		if err := CheckProviderConfig(ctx, t.Local, pc, field, ns); err != nil {
			return key, err
		}
		return ProviderConfigSecret(pc)
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

func notFound(err error, kind string, key types.NamespacedName) error {
	if apierrors.IsNotFound(err) {
		return resource.UserErrorf("ClusterNotFound", "%s %s does not exist", kind, key)
	}
	return fmt.Errorf("get %s %s: %w", kind, key, err)
}
