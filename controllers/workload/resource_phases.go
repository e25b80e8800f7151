package workload

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// OwnerAnnotation on a remote object holds the UID of the KubernetesApplicationResource
// (or kubernetes.terraplane.io Object) that created it; neither ever touches a remote
// object carrying another UID.
const OwnerAnnotation = "workload.terraplane.io/resource-uid"

// fieldOwner is the server-side apply field manager in target clusters.
const fieldOwner = client.FieldOwner("terraplane-workload")

// submit propagates the resource's Secrets, then applies its template and reads back the
// remote status.
func (r *ResourceReconciler) submit(ctx context.Context, res *workloadv1.KubernetesApplicationResource) error {
	if res.Spec.TargetRef == nil {
		return resource.Waitf("WaitingForTarget", "no target cluster yet: the application is not scheduled")
	}
	cluster, err := r.targets.Cluster(ctx, res.Namespace, *res.Spec.TargetRef)
	if err != nil {
		return err
	}
	for _, ref := range res.Spec.Secrets {
		if err := r.propagateSecret(ctx, cluster, res, ref.Name); err != nil {
			return err
		}
		markSubmitted(res)
	}
	obj, err := res.Spec.Template.Object()
	if err != nil {
		return resource.UserErrorf("InvalidTemplate", "spec.template: %v", err)
	}
	if err := apply(ctx, cluster, res.UID, obj, adoptNever); err != nil {
		return err
	}
	markSubmitted(res)
	return copyRemoteStatus(res, obj)
}

// markSubmitted records that res wrote something to its target cluster: from then on the
// scheduler never moves its application, which would leave that behind.
func markSubmitted(res *workloadv1.KubernetesApplicationResource) {
	res.Status.ClusterRef = res.Spec.TargetRef.DeepCopy()
}

// propagateSecret copies the local Secret name into the template's namespace of the
// target cluster as <resource-name>-<name>.
func (r *ResourceReconciler) propagateSecret(ctx context.Context, cluster *remote.Cluster, res *workloadv1.KubernetesApplicationResource, name string) error {
	local := &corev1.Secret{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: res.Namespace, Name: name}, local); err != nil {
		if apierrors.IsNotFound(err) {
			return resource.Waitf("WaitingForSecret", "Secret %s/%s does not exist yet", res.Namespace, name)
		}
		return fmt.Errorf("get secret %s/%s: %w", res.Namespace, name, err)
	}
	data := map[string]any{}
	for k, v := range local.Data {
		data[k] = base64.StdEncoding.EncodeToString(v)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret", "data": data}}
	obj.SetName(PropagatedSecretName(res, name))
	obj.SetNamespace(secretNamespace(res))
	if local.Type != "" {
		obj.Object["type"] = string(local.Type)
	}
	return apply(ctx, cluster, res.UID, obj, adoptNever)
}

// adoptFunc decides whether a remote object that exists, but whose owner annotation names
// another owner (other, empty when none), may be taken over: nil lets apply go on.
type adoptFunc func(ctx context.Context, cluster *remote.Cluster, obj *unstructured.Unstructured, other string) error

// adoptNever is how application resources treat a remote object they did not create:
// never taken over, reported as a conflict.
func adoptNever(_ context.Context, cluster *remote.Cluster, obj *unstructured.Unstructured, other string) error {
	by := "was not created by Terraplane"
	if other != "" {
		by = "belongs to another Terraplane object (UID " + other + ")"
	}
	return resource.UserErrorf(ReasonRemoteObjectConflict, "%s %s already exists in cluster %s and %s; it is left untouched: rename the template or remove that object",
		obj.GetKind(), describe(obj), cluster.Host, by)
}

// apply creates or updates obj in the cluster with server-side apply, unless another
// object than owner owns it there and adopt refuses to take it over; obj receives the
// cluster's copy.
func apply(ctx context.Context, cluster *remote.Cluster, owner types.UID, obj *unstructured.Unstructured, adopt adoptFunc) error {
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
	annotations[OwnerAnnotation] = string(owner)
	obj.SetAnnotations(annotations)
	err := cluster.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), fieldOwner, client.ForceOwnership)
	return remoteError(cluster, obj, err)
}

// checkOwner asks adopt about a remote object that exists but was not created by owner.
func checkOwner(ctx context.Context, cluster *remote.Cluster, owner types.UID, obj *unstructured.Unstructured, adopt adoptFunc) error {
	existing, err := getRemote(ctx, cluster, obj)
	if err != nil || existing == nil {
		return err
	}
	if other := existing.GetAnnotations()[OwnerAnnotation]; other != string(owner) {
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

// deleteRemote removes obj from the cluster when owner owns it.
func deleteRemote(ctx context.Context, cluster *remote.Cluster, owner types.UID, obj *unstructured.Unstructured) error {
	existing, err := getRemote(ctx, cluster, obj)
	if err != nil || existing == nil || existing.GetAnnotations()[OwnerAnnotation] != string(owner) {
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

// delete removes the remote object and the propagated Secrets, then the finalizer. A
// resource that never submitted anything (status.clusterRef unset) does not wait for a
// target cluster it cannot reach.
func (r *ResourceReconciler) delete(ctx context.Context, res *workloadv1.KubernetesApplicationResource) error {
	if res.Spec.TargetRef != nil {
		cluster, err := r.targets.Cluster(ctx, res.Namespace, *res.Spec.TargetRef)
		_, gone := resource.AsUserError(err)
		if err == nil {
			err = r.deleteAll(ctx, cluster, res)
		}
		switch {
		case err == nil:
		case res.Status.ClusterRef == nil:
			r.recorder.Eventf(res, corev1.EventTypeNormal, "NothingSubmitted", "nothing was submitted to the target cluster (%v); nothing to delete there", err)
		case gone:
			r.recorder.Eventf(res, corev1.EventTypeWarning, "RemoteObjectLeft", "the target cluster is gone (%v); nothing to delete there", err)
		default:
			return err
		}
	}
	return resource.RemoveFinalizer(ctx, r.client, res)
}

// deleteAll deletes the remote object and every propagated Secret res owns.
func (r *ResourceReconciler) deleteAll(ctx context.Context, cluster *remote.Cluster, res *workloadv1.KubernetesApplicationResource) error {
	obj, err := res.Spec.Template.Object()
	if err != nil {
		return nil // nothing was ever submitted
	}
	if err := deleteRemote(ctx, cluster, res.UID, obj); err != nil {
		return err
	}
	for _, ref := range res.Spec.Secrets {
		s := &unstructured.Unstructured{}
		s.SetAPIVersion("v1")
		s.SetKind("Secret")
		s.SetName(PropagatedSecretName(res, ref.Name))
		s.SetNamespace(secretNamespace(res))
		if err := deleteRemote(ctx, cluster, res.UID, s); err != nil {
			return err
		}
	}
	return nil
}

// copyRemoteStatus puts the remote object's .status, verbatim, into status.remote.
func copyRemoteStatus(res *workloadv1.KubernetesApplicationResource, obj *unstructured.Unstructured) error {
	st, found := obj.Object["status"]
	if !found {
		res.Status.Remote = nil
		return nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode remote status: %w", err)
	}
	res.Status.Remote = &apiextensionsv1.JSON{Raw: b}
	return nil
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
		return resource.UserErrorf("RemoteRejected", "cluster %s refused %s %s: %v", cluster.Host, obj.GetKind(), describe(obj), err)
	}
	return fmt.Errorf("%s %s in cluster %s: %w", obj.GetKind(), describe(obj), cluster.Host, remote.Classify(cluster.Host, err))
}

// PropagatedSecretName is the remote name of the local Secret name propagated by res.
func PropagatedSecretName(res *workloadv1.KubernetesApplicationResource, name string) string {
	return res.Name + "-" + name
}

// secretNamespace is where res's Secrets go: the template's namespace, else default.
func secretNamespace(res *workloadv1.KubernetesApplicationResource) string {
	if ns := res.Spec.Template.Metadata.Namespace; ns != "" {
		return ns
	}
	return corev1.NamespaceDefault
}

func describe(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

func ptrUID(u types.UID) *types.UID { return &u }
