package claim

import (
	"context"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Placement finds the cluster a claim that binds on first consumer is provisioned for;
// controllers/scheduler implements it for KubernetesApplications.
type Placement interface {
	// Cluster returns the cluster chosen for a claim in namespace ns whose connection
	// Secret is secret: the one selected names (the claim's selected-cluster annotation)
	// when set, else that of the Secret's first scheduled consumer. ref is that cluster as
	// the annotation records it, labels are its labels now; ref is empty when there is none yet.
	Cluster(ctx context.Context, ns, secret, selected string) (ref string, labels map[string]string, err error)
	// Consumers is the kind of object that consumes claims and the filter passing the
	// events of one just placed, on which the unbound claims of its namespace are looked
	// at again.
	Consumers() (client.Object, predicate.Predicate)
}

// placement returns the labels of the cluster chosen for a claim that binds on first
// consumer of its connection Secret secret, and whether one was chosen. The choice is
// recorded on the claim once — the cluster in annotation terraplane.io/selected-cluster
// (which a user may also set, as with a Pod's nodeName), its labels at that moment in
// terraplane.io/selected-cluster-labels — so that relabelling or deleting the cluster
// later never changes a provisioned resource.
func (r *Reconciler) placement(ctx context.Context, claim resource.Claim, secret string) (map[string]string, bool, error) {
	if labels, ok, err := recordedLabels(claim); ok || err != nil {
		return labels, ok, err
	}
	if r.opts.Placement == nil {
		return nil, false, resource.UserErrorf("NoConsumerPossible", "this control plane places no consumers of claims, so none binds on first consumer")
	}
	labels, err := choose(ctx, r.opts.Placement, claim, secret)
	if err != nil || labels == nil {
		return nil, false, err
	}
	if err := r.client.Update(ctx, claim); err != nil {
		return nil, false, fmt.Errorf("record selected cluster: %w", err)
	}
	return labels, true, nil
}

// choose asks p for the claim's cluster and sets the annotations that record the choice
// on the claim (not written yet); nil labels when there is no cluster yet.
func choose(ctx context.Context, p Placement, claim resource.Claim, secret string) (map[string]string, error) {
	annotations := claim.GetAnnotations()
	ref, labels, err := p.Cluster(ctx, claim.GetNamespace(), secret, annotations[common.SelectedClusterAnnotation])
	if err != nil || ref == "" {
		return nil, err
	}
	if labels == nil {
		labels = map[string]string{}
	}
	raw, err := json.Marshal(labels)
	if err != nil {
		return nil, fmt.Errorf("encode cluster labels: %w", err)
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[common.SelectedClusterAnnotation] = ref
	annotations[common.SelectedClusterLabelsAnnotation] = string(raw)
	claim.SetAnnotations(annotations)
	return labels, nil
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

// forConsumer maps a consumer to the unbound claims in its namespace, which may have
// been waiting for it as their first consumer.
func (r *Reconciler) forConsumer(ctx context.Context, consumer client.Object) []reconcile.Request {
	return r.claimsIn(ctx, consumer.GetNamespace(), func(c resource.Claim) bool {
		return c.GetClaimSpec().ResourceRef == nil && c.GetClaimSpec().WriteConnectionSecretToRef != nil
	})
}
