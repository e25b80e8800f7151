package planstore

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
)

// A plan's readable text is kept in a Plan object (terraform.terraplane.io), apart from
// the saved plan's Secret: reviewers read Plans, and need no access to Secrets, which
// hold every input value and the state. The Plan is named as the plan Secret is
// (resource.PlanName), owned by the resource, and read uncached: its text can be large.

// planTextBytes is the most of a plan's text a Plan holds: under the 1.5 MiB an object
// may take in etcd, with room for its summary.
const planTextBytes = 900 << 10

// planObject is the Plan of mg, as Get reads it into.
func planObject(mg resource.Managed) *terraformv1.Plan {
	return &terraformv1.Plan{ObjectMeta: metav1.ObjectMeta{Name: resource.PlanName(mg), Namespace: mg.GetNamespace()}}
}

// writeText makes mg's Plan hold plan, made for reason from inputs hash: its summary and
// its text, cut to fit.
func (s *Store) writeText(ctx context.Context, mg resource.Managed, plan *engine.Plan, reason common.PlanReason, hash string) error {
	p := planObject(mg)
	err := s.reader.Get(ctx, client.ObjectKeyFromObject(p), p)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("keep plan text: %w", err)
	}
	create := apierrors.IsNotFound(err)
	if !create && p.Summary.ID == plan.ID && p.Text == string(fitText(plan.Text, planTextBytes)) {
		return nil // unchanged: an observed resource finds the same drift every interval
	}
	gvk := mg.GetObjectKind().GroupVersionKind()
	if gvk.Empty() {
		if kinds, _, kerr := s.client.Scheme().ObjectKinds(mg); kerr == nil && len(kinds) > 0 {
			gvk = kinds[0]
		}
	}
	p.Labels = map[string]string{resource.ManagedLabel: string(mg.GetUID())}
	p.ResourceRef = common.ObjectReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: mg.GetName(),
		Namespace: mg.GetNamespace(), UID: mg.GetUID()}
	p.Summary = *Summary(plan.ID, reason, plan.Changes, hash, metav1.Now())
	p.Summary.Providers = ProviderSummary(plan.ProviderChanges)
	p.Text = string(fitText(plan.Text, planTextBytes))
	if err := controllerutil.SetOwnerReference(mg, p, s.client.Scheme()); err != nil {
		return fmt.Errorf("keep plan text: %w", err)
	}
	if create {
		err = s.client.Create(ctx, p)
	} else {
		err = s.client.Update(ctx, p)
	}
	if err != nil {
		return fmt.Errorf("keep plan text: %w", err)
	}
	return nil
}

// readText returns the text of plan id from mg's Plan; "" when the Plan holds another.
func (s *Store) readText(ctx context.Context, mg resource.Managed, id string) (string, error) {
	p := planObject(mg)
	err := s.reader.Get(ctx, client.ObjectKeyFromObject(p), p)
	if apierrors.IsNotFound(err) || err == nil && p.Summary.ID != id {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read plan text: %w", err)
	}
	return p.Text, nil
}

// removeText deletes mg's Plan.
func (s *Store) removeText(ctx context.Context, mg resource.Managed) error {
	if err := s.client.Delete(ctx, planObject(mg)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete plan text: %w", err)
	}
	return nil
}
