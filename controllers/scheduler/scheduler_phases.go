package scheduler

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Unschedulable is why an application has no cluster: a reason and an actionable message.
type Unschedulable struct {
	// Reason is a CamelCase condition reason.
	Reason string
	// Message says what would make the application schedulable.
	Message string
}

// place chooses the application's cluster, or says why there is none.
func (r *Reconciler) place(ctx context.Context, app *workloadv1.KubernetesApplication) (*workloadv1.ClusterReference, string, error) {
	if ref := app.Spec.ProviderConfigRef; ref != nil {
		return r.placeOnProviderConfig(ctx, app, ref)
	}
	sel, err := metav1.LabelSelectorAsSelector(app.Spec.ClusterSelector)
	if app.Spec.ClusterSelector == nil {
		sel, err = labels.Everything(), nil
	}
	if err != nil {
		return nil, "", &Unschedulable{Reason: "InvalidClusterSelector", Message: fmt.Sprintf("spec.clusterSelector: %v", err)}
	}
	claims := &computev1.KubernetesClusterList{}
	if err := r.client.List(ctx, claims, client.InNamespace(app.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, "", fmt.Errorf("list clusters: %w", err)
	}
	var ready, notReady []string
	for _, c := range claims.Items {
		if c.Status.BindingPhase == common.BindingPhaseBound && resource.IsReady(c.Status.Conditions) &&
			c.Spec.WriteConnectionSecretToRef != nil && c.DeletionTimestamp.IsZero() {
			ready = append(ready, c.Name)
		} else {
			notReady = append(notReady, c.Name)
		}
	}
	if len(ready) == 0 {
		return nil, "", noCluster(app.Namespace, sel, notReady)
	}
	return r.leastLoaded(ctx, app.Namespace, ready)
}

// placeOnProviderConfig places the application on the cluster a ProviderConfig reaches.
func (r *Reconciler) placeOnProviderConfig(ctx context.Context, app *workloadv1.KubernetesApplication, ref *workloadv1.ProviderConfigReference) (*workloadv1.ClusterReference, string, error) {
	key := client.ObjectKey{Namespace: app.Namespace, Name: ref.Name}
	if ref.Namespace != "" {
		key.Namespace = ref.Namespace
	}
	if err := r.client.Get(ctx, key, &kubernetesv1.ProviderConfig{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", &Unschedulable{Reason: "ProviderConfigNotFound", Message: fmt.Sprintf("ProviderConfig %s named by spec.providerConfigRef does not exist", key)}
		}
		return nil, "", fmt.Errorf("get providerconfig %s: %w", key, err)
	}
	return &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindProviderConfig, Name: key.Name, Namespace: key.Namespace},
		fmt.Sprintf("placed on ProviderConfig %s named by spec.providerConfigRef", key), nil
}

// leastLoaded picks the candidate running the fewest applications; ties go to the
// first name in alphabetical order.
func (r *Reconciler) leastLoaded(ctx context.Context, ns string, candidates []string) (*workloadv1.ClusterReference, string, error) {
	apps := &workloadv1.KubernetesApplicationList{}
	if err := r.reader.List(ctx, apps, client.InNamespace(ns)); err != nil {
		return nil, "", fmt.Errorf("list applications: %w", err)
	}
	load := map[string]int{}
	for _, a := range apps.Items {
		if ref := a.Status.ClusterRef; ref != nil && ref.Kind == workloadv1.ClusterKindClaim {
			load[ref.Name]++
		}
	}
	sort.Slice(candidates, func(i, j int) bool {
		if load[candidates[i]] != load[candidates[j]] {
			return load[candidates[i]] < load[candidates[j]]
		}
		return candidates[i] < candidates[j]
	})
	best := candidates[0]
	return &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Name: best, Namespace: ns},
		fmt.Sprintf("placed on KubernetesCluster %s: fewest applications (%d) among %d ready matching clusters, ties by name", best, load[best], len(candidates)), nil
}

// Error returns the message.
func (u *Unschedulable) Error() string { return u.Message }

func noCluster(ns string, sel labels.Selector, notReady []string) error {
	if len(notReady) == 0 {
		return &Unschedulable{Reason: "NoMatchingCluster", Message: fmt.Sprintf("no KubernetesCluster in namespace %s matches clusterSelector %q; create one or relabel a cluster", ns, sel.String())}
	}
	sort.Strings(notReady)
	return &Unschedulable{Reason: "NoReadyCluster", Message: fmt.Sprintf("KubernetesClusters %s match clusterSelector %q but none is Bound and Ready with a connection Secret", strings.Join(notReady, ", "), sel.String())}
}
