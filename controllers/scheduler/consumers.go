package scheduler

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/controllers/kubernetes"
	"terraplane.io/terraplane/internal/resource"
)

// FirstConsumers places claims that bind on first consumer: on the cluster of the
// KubernetesApplication using the claim's connection Secret that was scheduled first
// (claim.Placement; internal/app hands it to the claim reconcilers).
type FirstConsumers struct {
	// Client reads applications, KubernetesCluster claims and ProviderConfigs.
	Client client.Client
}

// Cluster returns the cluster named by selected (the claim's selected-cluster annotation)
// when set, else that of the first scheduled consumer of Secret secret in namespace ns,
// formatted as that annotation records it, with its labels now; empty when there is none.
func (f FirstConsumers) Cluster(ctx context.Context, ns, secret, selected string) (string, map[string]string, error) {
	ref, err := f.selectedCluster(ctx, ns, secret, selected)
	if err != nil || ref == nil {
		return "", nil, err
	}
	field := "the cluster of the claim's first consumer (its status.clusterRef)"
	if selected != "" {
		field = "annotation " + common.SelectedClusterAnnotation
	}
	labels, err := f.clusterLabels(ctx, ns, field, *ref)
	if err != nil {
		return "", nil, err
	}
	return ref.String(), labels, nil
}

// Consumers is what consumes claims, KubernetesApplications, and the events of one just
// placed.
func (f FirstConsumers) Consumers() (client.Object, predicate.Predicate) {
	return &workloadv1.KubernetesApplication{}, newlyScheduled
}

// selectedCluster parses selected, or else finds the cluster of the first scheduled
// consumer; nil when there is neither.
func (f FirstConsumers) selectedCluster(ctx context.Context, ns, secret, selected string) (*workloadv1.ClusterReference, error) {
	if selected != "" {
		ref, err := workloadv1.ParseClusterReference(selected)
		if err != nil {
			return nil, resource.UserErrorf("InvalidSelectedCluster", "annotation %s: %v", common.SelectedClusterAnnotation, err)
		}
		return &ref, nil
	}
	ref, err := f.firstConsumerCluster(ctx, ns, secret)
	if ref != nil && ref.Namespace == "" {
		ref.Namespace = ns
	}
	return ref, err
}

// clusterLabels reads the labels of the KubernetesCluster claim or ProviderConfig ref
// names, when it allows a claim in namespace ns (named by field) to use it: a claim only
// from its own namespace, a ProviderConfig from those its spec.allowedNamespaces lists.
func (f FirstConsumers) clusterLabels(ctx context.Context, ns, field string, ref workloadv1.ClusterReference) (map[string]string, error) {
	key := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
	var cluster client.Object = &computev1.KubernetesCluster{}
	if ref.Kind == workloadv1.ClusterKindProviderConfig {
		cluster = &kubernetesv1.ProviderConfig{}
	} else if err := kubernetes.CheckClaim(key, field, ns); err != nil {
		return nil, err
	}
	if err := f.Client.Get(ctx, key, cluster); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, resource.UserErrorf("SelectedClusterNotFound", "%s %s/%s, chosen for this claim's first consumer, does not exist", ref.Kind, ref.Namespace, ref.Name)
		}
		return nil, fmt.Errorf("get selected cluster: %w", err)
	}
	if pc, ok := cluster.(*kubernetesv1.ProviderConfig); ok {
		if err := kubernetes.CheckProviderConfig(ctx, f.Client, pc, field, ns); err != nil {
			return nil, err
		}
	}
	labels := map[string]string{}
	for k, v := range cluster.GetLabels() {
		labels[k] = v
	}
	return labels, nil
}

// firstConsumerCluster finds the scheduled applications in namespace ns whose resources
// use Secret secret and returns the cluster of the one scheduled first (ties by name).
func (f FirstConsumers) firstConsumerCluster(ctx context.Context, ns, secret string) (*workloadv1.ClusterReference, error) {
	apps := &workloadv1.KubernetesApplicationList{}
	if err := f.Client.List(ctx, apps, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list applications: %w", err)
	}
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

// scheduledAt is when the application was placed.
func scheduledAt(app *workloadv1.KubernetesApplication) metav1.Time {
	if c := meta.FindStatusCondition(app.Status.Conditions, workloadv1.TypeScheduled); c != nil {
		return c.LastTransitionTime
	}
	return app.CreationTimestamp
}
