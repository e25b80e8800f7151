package workload

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/controllers/kubernetes"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// submit propagates the resource's Secrets, then applies its template and reads back the
// remote status.
func (r *ResourceReconciler) submit(ctx context.Context, res *workloadv1.KubernetesApplicationResource) error {
	if res.Spec.TargetRef == nil {
		return resource.Waitf("WaitingForTarget", "no target cluster yet: the application is not scheduled")
	}
	cluster, err := r.targets.Cluster(ctx, res.Namespace, "spec.targetRef", *res.Spec.TargetRef)
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
	if err := kubernetes.Apply(ctx, cluster, res.UID, obj, adoptNever); err != nil {
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
	return kubernetes.Apply(ctx, cluster, res.UID, obj, adoptNever)
}

// adoptNever is how application resources treat a remote object they did not create:
// never taken over, reported as a conflict.
func adoptNever(_ context.Context, cluster *remote.Cluster, obj *unstructured.Unstructured, other string) error {
	by := "was not created by Terraplane"
	if other != "" {
		by = "belongs to another Terraplane object (UID " + other + ")"
	}
	return resource.UserErrorf(common.ReasonRemoteObjectConflict, "%s %s already exists in cluster %s and %s; it is left untouched: rename the template or remove that object",
		obj.GetKind(), kubernetes.Describe(obj), cluster.Host, by)
}

// delete removes the remote object and the propagated Secrets, then the finalizer. A
// resource that never submitted anything (status.clusterRef unset) does not wait for a
// target cluster it cannot reach.
func (r *ResourceReconciler) delete(ctx context.Context, res *workloadv1.KubernetesApplicationResource) error {
	if res.Spec.TargetRef != nil {
		cluster, err := r.targets.Cluster(ctx, res.Namespace, "spec.targetRef", *res.Spec.TargetRef)
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
	if err := kubernetes.DeleteRemote(ctx, cluster, res.UID, obj); err != nil {
		return err
	}
	for _, ref := range res.Spec.Secrets {
		s := &unstructured.Unstructured{}
		s.SetAPIVersion("v1")
		s.SetKind("Secret")
		s.SetName(PropagatedSecretName(res, ref.Name))
		s.SetNamespace(secretNamespace(res))
		if err := kubernetes.DeleteRemote(ctx, cluster, res.UID, s); err != nil {
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
