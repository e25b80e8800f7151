package kubernetes

import (
	"context"
	"fmt"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// fieldOwner is the server-side apply field manager in target clusters.
const fieldOwner = client.FieldOwner("terraplane-workload")

// AdoptFunc decides whether a remote object that exists, but whose owner annotation names
// another owner (other, empty when none), may be taken over: nil lets Apply go on.
type AdoptFunc func(ctx context.Context, cluster *remote.Cluster, obj *unstructured.Unstructured, other string) error

// Apply creates or updates obj in the cluster with server-side apply, unless another
// object than owner owns it there and adopt refuses to take it over; obj receives the
// cluster's copy.
func Apply(ctx context.Context, cluster *remote.Cluster, owner types.UID, obj *unstructured.Unstructured, adopt AdoptFunc) error {
	if namespaced, err := cluster.Client.IsObjectNamespaced(obj); err == nil && namespaced && obj.GetNamespace() == "" {
		return resource.UserErrorf("NamespaceRequired", "%s is namespaced in cluster %s: set metadata.namespace of %s", obj.GetKind(), cluster.Host, obj.GetName())
	}
	if err := checkOwner(ctx, cluster, owner, obj, adopt); err != nil {
		return err
	}
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[common.RemoteOwnerAnnotation] = string(owner)
	obj.SetAnnotations(annotations)
	err := cluster.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), fieldOwner, client.ForceOwnership)
	return remoteError(cluster, obj, err)
}

// checkOwner asks adopt about a remote object that exists but was not created by owner.
func checkOwner(ctx context.Context, cluster *remote.Cluster, owner types.UID, obj *unstructured.Unstructured, adopt AdoptFunc) error {
	existing, err := getRemote(ctx, cluster, obj)
	if err != nil || existing == nil {
		return err
	}
	if other := existing.GetAnnotations()[common.RemoteOwnerAnnotation]; other != string(owner) {
		return adopt(ctx, cluster, obj, other)
	}
	return nil
}

// getRemote reads obj's counterpart in the cluster; nil when it does not exist.
func getRemote(ctx context.Context, cluster *remote.Cluster, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if namespaced, err := cluster.Client.IsObjectNamespaced(obj); err == nil && namespaced && obj.GetNamespace() == "" {
		return nil, nil // never submitted: apply refuses it
	}
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(obj.GroupVersionKind())
	err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(obj), existing)
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) { // no such object, or not even such a kind
		return nil, nil
	}
	if err != nil {
		return nil, remoteError(cluster, obj, err)
	}
	return existing, nil
}

// DeleteRemote removes obj from the cluster when owner owns it.
func DeleteRemote(ctx context.Context, cluster *remote.Cluster, owner types.UID, obj *unstructured.Unstructured) error {
	existing, err := getRemote(ctx, cluster, obj)
	if err != nil || existing == nil || existing.GetAnnotations()[common.RemoteOwnerAnnotation] != string(owner) {
		return err
	}
	if !existing.GetDeletionTimestamp().IsZero() {
		return nil
	}
	err = cluster.Client.Delete(ctx, existing, client.PropagationPolicy("Background"),
		client.Preconditions{UID: ptrUID(existing.GetUID())})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return remoteError(cluster, obj, err)
}

// remoteError turns a failed remote call into a typed error: unreachable clusters,
// kinds the cluster does not serve and objects it rejects.
func remoteError(cluster *remote.Cluster, obj *unstructured.Unstructured, err error) error {
	switch {
	case err == nil:
		return nil
	case meta.IsNoMatchError(err):
		return resource.UserErrorf("UnknownKind", "cluster %s does not serve %s %s: install its CRD there or fix the template", cluster.Host, obj.GetAPIVersion(), obj.GetKind())
	case apierrors.IsNotFound(err) && obj.GetNamespace() != "":
		return resource.Waitf("WaitingForNamespace", "namespace %s does not exist yet in cluster %s", obj.GetNamespace(), cluster.Host)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsForbidden(err):
		return resource.UserErrorf("RemoteRejected", "cluster %s refused %s %s: %v", cluster.Host, obj.GetKind(), Describe(obj), err)
	}
	return fmt.Errorf("%s %s in cluster %s: %w", obj.GetKind(), Describe(obj), cluster.Host, remote.Classify(cluster.Host, err))
}

// Describe names obj as namespace/name, or name when it is cluster-scoped.
func Describe(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

func ptrUID(u types.UID) *types.UID { return &u }
