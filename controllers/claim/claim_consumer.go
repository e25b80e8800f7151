package claim

import (
	"context"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// selectedCluster returns the cluster chosen for a claim that binds on first consumer:
// the one in its annotation, or else the cluster of the first scheduled application that
// uses its connection Secret, which is then recorded in the annotation so that the choice
// sticks. nil means no consumer is scheduled yet.
func (r *Reconciler) selectedCluster(ctx context.Context, claim resource.Claim) (*workloadv1.ClusterReference, error) {
	if s := claim.GetAnnotations()[common.SelectedClusterAnnotation]; s != "" {
		ref, err := workloadv1.ParseClusterReference(s)
		if err != nil {
			return nil, resource.UserErrorf("InvalidSelectedCluster", "annotation %s: %v", common.SelectedClusterAnnotation, err)
		}
		return &ref, nil
	}
	ref, err := r.firstConsumerCluster(ctx, claim)
	if err != nil || ref == nil {
		return nil, err
	}
	if ref.Namespace == "" {
		ref.Namespace = claim.GetNamespace()
	}
	annotations := claim.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[common.SelectedClusterAnnotation] = ref.String()
	claim.SetAnnotations(annotations)
	if err := r.client.Update(ctx, claim); err != nil {
		return nil, fmt.Errorf("record selected cluster: %w", err)
	}
	return ref, nil
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
