package scheduler

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resourcepool"
)

// ReasonClustersFull (in an Unschedulable message): every matching cluster is a member
// of an autoscaled pool and holds its applicationsPerCluster applications.
const ReasonClustersFull = "ClustersFull"

// autoscaled reads the autoscaled ResourcePools of namespace ns; none when the API
// server does not serve pools.
func (r *Reconciler) autoscaled(ctx context.Context, ns string) ([]resourcepool.Autoscaled, error) {
	list := &scalingv1.ResourcePoolList{}
	if err := r.client.List(ctx, list, client.InNamespace(ns)); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list resource pools: %w", err)
	}
	var pools []resourcepool.Autoscaled
	for _, p := range list.Items {
		if p.Spec.Autoscale == nil || !p.DeletionTimestamp.IsZero() {
			continue
		}
		pools = append(pools, resourcepool.Autoscaled{Name: p.Name, TemplateLabels: p.Spec.ClaimTemplate.Labels,
			Spec: *p.Spec.Autoscale, Members: int32(len(p.Status.Clusters))})
	}
	return pools, nil
}

// growing adds to an Unschedulable which autoscaled pools grow for the application.
func growing(err error, pools []resourcepool.Autoscaled, sel labels.Selector) error {
	u, ok := err.(*Unschedulable)
	if !ok {
		return err
	}
	if g := resourcepool.Growing(pools, sel); g != "" {
		u.Message += "; " + g
	}
	return u
}

// leastLoaded picks, among the ready matching clusters that have room (a member of an
// autoscaled pool takes at most its applicationsPerCluster), the one running the fewest
// applications; ties go to the first name in alphabetical order.
func (r *Reconciler) leastLoaded(ctx context.Context, ns string, sel labels.Selector, ready []computev1.KubernetesCluster, pools []resourcepool.Autoscaled) (*workloadv1.ClusterReference, string, error) {
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
	byName := map[string]resourcepool.Autoscaled{}
	for _, p := range pools {
		byName[p.Name] = p
	}
	candidates := make([]resourcepool.Candidate, 0, len(ready))
	for _, c := range ready {
		candidates = append(candidates, resourcepool.Candidate{Name: c.Name, Pool: c.Labels[common.PoolLabel], Load: load[c.Name]})
	}
	room, full := resourcepool.WithRoom(candidates, byName)
	if len(room) == 0 {
		return nil, "", growing(&Unschedulable{Reason: ReasonClustersFull, Message: resourcepool.FullMessage(full, byName, sel.String())}, pools, sel)
	}
	sort.Slice(room, func(i, j int) bool {
		if room[i].Load != room[j].Load {
			return room[i].Load < room[j].Load
		}
		return room[i].Name < room[j].Name
	})
	best := room[0]
	if best.Pool != "" {
		if err := r.reserve(ctx, ready, best.Name); err != nil {
			return nil, "", err
		}
	}
	return &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Name: best.Name, Namespace: ns},
		fmt.Sprintf("placed on KubernetesCluster %s: fewest applications (%d) among %d ready matching clusters, ties by name", best.Name, best.Load, len(room)), nil
}

// reserve stamps the pool member name (one of ready) with the time an application is
// placed on it, before the placement is recorded: the write changes the member's
// resourceVersion, so a scale-down that read it idle fails its precondition, and the
// pool counts it busy from then. A member already being deleted takes no application.
func (r *Reconciler) reserve(ctx context.Context, ready []computev1.KubernetesCluster, name string) error {
	i := slices.IndexFunc(ready, func(c computev1.KubernetesCluster) bool { return c.Name == name })
	c := ready[i].DeepCopy()
	orig := c.DeepCopy()
	ann := c.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[common.PlacedAtAnnotation] = time.Now().UTC().Format(time.RFC3339)
	c.SetAnnotations(ann)
	if err := r.client.Patch(ctx, c, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("reserve KubernetesCluster %s: %w", name, err)
	}
	if !c.DeletionTimestamp.IsZero() {
		return &Unschedulable{Reason: "NoReadyCluster", Message: fmt.Sprintf("KubernetesCluster %s/%s is being removed by its pool; placing again", c.Namespace, c.Name)}
	}
	return nil
}
