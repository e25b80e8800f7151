package kubernetes

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/remote"
	"terraplane.io/terraplane/internal/resource"
)

// objects is the Connector of kubernetes.terraplane.io Objects: Kubernetes objects in a
// target cluster treated as external resources (the seed's native connecter).
type objects struct {
	native
}

// setupObjects registers Objects with the managed managed.
func setupObjects(mgr ctrl.Manager, targets *Targets, opts Options) error {
	r := &objects{native{client: mgr.GetClient(), targets: targets, opts: opts, recorder: resource.NewRecorder(mgr, "terraplane-kubernetes")}}
	k := r.managedKind("kubernetes-object", func() resource.Managed { return &kubernetesv1.Object{} },
		func() client.ObjectList { return &kubernetesv1.ObjectList{} }, r)
	k.Class = resource.ClassKind{GVK: kubernetesv1.GroupVersion.WithKind("ObjectClass"),
		New: func() resource.NonPortableClass { return &kubernetesv1.ObjectClass{} }}
	return managed.Setup(mgr, k)
}

// object is the External of one Object: its target cluster.
type object struct {
	r       *objects
	cluster *remote.Cluster
}

// Connect reaches the Object's target cluster.
func (r *objects) Connect(ctx context.Context, mg resource.Managed) (managed.External, error) {
	o := mg.(*kubernetesv1.Object)
	cluster, err := r.targets.Cluster(ctx, o.Namespace, "spec.providerRef", r.target(o))
	if err != nil {
		return nil, err
	}
	return &object{r: r, cluster: cluster}, nil
}

// Observe asks for an apply on every look: server-side apply changes nothing that is
// already right, corrects drift, and reads back the remote status.
func (e *object) Observe(context.Context, resource.Managed) (managed.Observation, error) {
	return managed.Observation{}, nil
}

// Delete removes the remote object unless the policy retains it, and the connection Secret.
func (r *objects) Delete(ctx context.Context, mg resource.Managed) error {
	o := mg.(*kubernetesv1.Object)
	if o.Spec.ReclaimPolicy != common.ReclaimRetain {
		cluster, err := r.targets.Cluster(ctx, o.Namespace, "spec.providerRef", r.target(o))
		if _, user := resource.AsUserError(err); user {
			r.recorder.Eventf(o, corev1.EventTypeWarning, "RemoteObjectLeft", "the target cluster is unavailable (%v); nothing to delete there", err)
		} else if err != nil {
			return err
		} else if obj, err := o.Spec.ForProvider.Manifest.Object(); err == nil {
			if err := DeleteRemote(ctx, cluster, o.UID, obj); err != nil {
				return err
			}
		}
	}
	return resource.DeleteConnectionSecret(ctx, r.client, o)
}

// target is the ProviderConfig the Object names.
func (r *objects) target(o *kubernetesv1.Object) workloadv1.ClusterReference {
	ref := workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig}
	if o.Spec.ProviderRef != nil {
		ref.Name = o.Spec.ProviderRef.Name
	}
	return ref
}
