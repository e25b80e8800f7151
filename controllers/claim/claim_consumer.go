package claim

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// placement returns the labels of the cluster chosen for a claim that binds on first
// consumer, and whether one was chosen. The choice is recorded on the claim once — the
// cluster in annotation terraplane.io/selected-cluster (which a user may also set, as with
// a Pod's nodeName), its labels at that moment in terraplane.io/selected-cluster-labels —
// so that relabelling or deleting the cluster later never changes a provisioned resource.
func (r *Reconciler) placement(ctx context.Context, claim resource.Claim) (map[string]string, bool, error) {
	if labels, ok, err := recordedLabels(claim); ok || err != nil {
		return labels, ok, err
	}
	ref, err := r.selectedCluster(ctx, claim)
	if err != nil || ref == nil {
		return nil, false, err
	}
	labels, err := r.clusterLabels(ctx, *ref)
	if err != nil {
		return nil, false, err
	}
	raw, err := json.Marshal(labels)
	if err != nil {
		return nil, false, fmt.Errorf("encode cluster labels: %w", err)
	}
	annotations := claim.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[common.SelectedClusterAnnotation] = ref.String()
	annotations[common.SelectedClusterLabelsAnnotation] = string(raw)
	claim.SetAnnotations(annotations)
	if err := r.client.Update(ctx, claim); err != nil {
		return nil, false, fmt.Errorf("record selected cluster: %w", err)
	}
	return labels, true, nil
}

// recordedLabels reads the cluster labels recorded on the claim; ok is false when none are.
func recordedLabels(claim resource.Claim) (labels map[string]string, ok bool, err error) {
	raw, ok := claim.GetAnnotations()[common.SelectedClusterLabelsAnnotation]
	if !ok {
		return nil, false, nil
	}
	if err := json.Unmarshal([]byte(raw), &labels); err != nil {
		return nil, false, resource.UserErrorf("InvalidSelectedCluster", "annotation %s is not a JSON object of labels: %v", common.SelectedClusterLabelsAnnotation, err)
	}
	if labels == nil {
		labels = map[string]string{}
	}
	return labels, true, nil
}

// selectedCluster returns the cluster named by the claim's annotation, or else the cluster
// of its first scheduled consumer; nil when there is neither.
func (r *Reconciler) selectedCluster(ctx context.Context, claim resource.Claim) (*workloadv1.ClusterReference, error) {
	if s := claim.GetAnnotations()[common.SelectedClusterAnnotation]; s != "" {
		ref, err := workloadv1.ParseClusterReference(s)
		if err != nil {
			return nil, resource.UserErrorf("InvalidSelectedCluster", "annotation %s: %v", common.SelectedClusterAnnotation, err)
		}
		return &ref, nil
	}
	ref, err := r.firstConsumerCluster(ctx, claim)
	if ref != nil && ref.Namespace == "" {
		ref.Namespace = claim.GetNamespace()
	}
	return ref, err
}

// clusterLabels reads the labels of the KubernetesCluster claim or ProviderConfig ref names.
func (r *Reconciler) clusterLabels(ctx context.Context, ref workloadv1.ClusterReference) (map[string]string, error) {
	var cluster client.Object = &computev1.KubernetesCluster{}
	if ref.Kind == workloadv1.ClusterKindProviderConfig {
		cluster = &kubernetesv1.ProviderConfig{}
	}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, resource.UserErrorf("SelectedClusterNotFound", "%s %s/%s, chosen for this claim's first consumer, does not exist", ref.Kind, ref.Namespace, ref.Name)
		}
		return nil, fmt.Errorf("get selected cluster: %w", err)
	}
	labels := map[string]string{}
	for k, v := range cluster.GetLabels() {
		labels[k] = v
	}
	return labels, nil
}

// firstConsumerCluster finds the scheduled applications in the claim's namespace whose
// resources use its connection Secret and returns the cluster of the one scheduled
// first (ties by name).
func (r *Reconciler) firstConsumerCluster(ctx context.Context, claim resource.Claim) (*workloadv1.ClusterReference, error) {
	apps := &workloadv1.KubernetesApplicationList{}
	if err := r.client.List(ctx, apps, client.InNamespace(claim.GetNamespace())); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
	secret := claim.GetClaimSpec().WriteConnectionSecretToRef.Name
	var consumers []workloadv1.KubernetesApplication
	for _, app := range apps.Items {
		if app.Status.ClusterRef != nil && app.DeletionTimestamp.IsZero() && usesSecret(&app, secret) {
			consumers = append(consumers, app)
		}
	}
	if len(consumers) == 0 {
		return nil, nil
	}
	sort.Slice(consumers, func(i, j int) bool {
		ti, tj := scheduledAt(&consumers[i]), scheduledAt(&consumers[j])
		if !ti.Equal(&tj) {
			return ti.Before(&tj)
		}
		return consumers[i].Name < consumers[j].Name
	})
	return consumers[0].Status.ClusterRef.DeepCopy(), nil
}

// usesSecret reports whether one of the application's resources propagates Secret name.
func usesSecret(app *workloadv1.KubernetesApplication, name string) bool {
	for _, t := range app.Spec.ResourceTemplates {
		for _, s := range t.Spec.Secrets {
			if s.Name == name {
				return true
			}
		}
	}
	return false
}

// newlyScheduled passes the events of applications that have just been placed.
var newlyScheduled = predicate.Funcs{
	CreateFunc:  func(e event.CreateEvent) bool { return scheduled(e.Object) },
	UpdateFunc:  func(e event.UpdateEvent) bool { return !scheduled(e.ObjectOld) && scheduled(e.ObjectNew) },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// scheduled reports whether obj is an application with a cluster.
func scheduled(obj client.Object) bool {
	app, ok := obj.(*workloadv1.KubernetesApplication)
	return ok && app.Status.ClusterRef != nil
}

// forApplication maps an application to the unbound claims in its namespace, which may
// have been waiting for it as their first consumer.
func (r *Reconciler) forApplication(ctx context.Context, app client.Object) []reconcile.Request {
	return r.claimsIn(ctx, app.GetNamespace(), func(c resource.Claim) bool {
		return c.GetClaimSpec().ResourceRef == nil && c.GetClaimSpec().WriteConnectionSecretToRef != nil
	})
}

// scheduledAt is when the application was placed.
func scheduledAt(app *workloadv1.KubernetesApplication) metav1.Time {
	if c := meta.FindStatusCondition(app.Status.Conditions, workloadv1.TypeScheduled); c != nil {
		return c.LastTransitionTime
	}
	return app.CreationTimestamp
}
