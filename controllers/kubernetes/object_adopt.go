package kubernetes

import (
	"context"
	"fmt"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// adopt decides, by o's spec.adoptionPolicy, whether o takes over a remote object that it
// did not create, and says exactly how to go on when it does not.
func (r *objects) adopt(o *kubernetesv1.Object) AdoptFunc {
	return func(ctx context.Context, cluster *remote.Cluster, obj *unstructured.Unstructured, other string) error {
		exists := fmt.Sprintf("%s %s already exists in cluster %s", obj.GetKind(), Describe(obj), cluster.Host)
		policy := o.Spec.AdoptionPolicy
		if other == "" {
			if policy == kubernetesv1.AdoptAlways {
				r.recorder.Eventf(o, corev1.EventTypeNormal, common.ReasonAdopted, "%s and was not created by Terraplane; adoptionPolicy Always takes it over", exists)
				return nil
			}
			return resource.UserErrorf(common.ReasonRemoteObjectConflict, "%s and was not created by Terraplane; it is left untouched: set spec.adoptionPolicy: Always on this Object to take it over, or rename the manifest", exists)
		}
		owner, err := r.ownerOf(ctx, types.UID(other))
		if err != nil {
			return err
		}
		if owner != "" {
			return resource.UserErrorf(common.ReasonRemoteObjectConflict, "%s and belongs to %s, which still exists; it is never taken over from a live owner: delete %s first (with reclaimPolicy Retain the remote object stays), then set spec.adoptionPolicy: Orphaned on this Object",
				exists, owner, owner)
		}
		if policy == kubernetesv1.AdoptOrphaned || policy == kubernetesv1.AdoptAlways {
			r.recorder.Eventf(o, corev1.EventTypeNormal, common.ReasonAdopted, "%s and was left behind by a Terraplane object that is gone (UID %s); adoptionPolicy %s takes it over", exists, other, policy)
			return nil
		}
		return resource.UserErrorf(common.ReasonRemoteObjectConflict, "%s and was left behind by a Terraplane object that no longer exists (UID %s), such as an Object deleted with reclaimPolicy Retain; it is left untouched: set spec.adoptionPolicy: Orphaned on this Object to take it over, or rename the manifest",
			exists, other)
	}
}

// ownerOf names the Object or application resource in this control plane whose UID is
// uid ("Object ns/name"); empty when there is none.
func (r *objects) ownerOf(ctx context.Context, uid types.UID) (string, error) {
	objects := &kubernetesv1.ObjectList{}
	if err := r.client.List(ctx, objects); err != nil {
		return "", fmt.Errorf("list Objects: %w", err)
	}
	for _, o := range objects.Items {
		if o.UID == uid {
			return "Object " + o.Namespace + "/" + o.Name, nil
		}
	}
	resources := &workloadv1.KubernetesApplicationResourceList{}
	if err := r.client.List(ctx, resources); err != nil {
		return "", fmt.Errorf("list KubernetesApplicationResources: %w", err)
	}
	for _, res := range resources.Items {
		if res.UID == uid {
			return "KubernetesApplicationResource " + res.Namespace + "/" + res.Name, nil
		}
	}
	return "", nil
}
