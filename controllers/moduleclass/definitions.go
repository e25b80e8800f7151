package moduleclass

import (
	"context"
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
)

// definitionNamespace is where a ClaimDefinition's moduleClassRef without a namespace points.
const definitionNamespace = "terraplane-system"

// fromClaims lists the variables that claims supply to class: those a ClaimDefinition
// generated from class exposes as parameters (all but hidden ones, or the exposed ones).
func (r *Reconciler) fromClaims(ctx context.Context, class *terraformv1.ModuleClass, m *module.Module) ([]string, error) {
	list := &apiextv1.ClaimDefinitionList{}
	if err := r.client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list claim definitions: %w", err)
	}
	var out []string
	for _, d := range list.Items {
		from := d.Spec.FromModule
		if from == nil || !refersTo(from, class) {
			continue
		}
		for _, v := range m.Variables {
			if len(from.Expose) > 0 && slices.Contains(from.Expose, v.Name) || len(from.Expose) == 0 && !slices.Contains(from.Hide, v.Name) {
				out = append(out, v.Name)
			}
		}
	}
	return out, nil
}

func refersTo(from *apiextv1.FromModule, class client.Object) bool {
	ns := from.ModuleClassRef.Namespace
	if ns == "" {
		ns = definitionNamespace
	}
	return from.ModuleClassRef.Name == class.GetName() && ns == class.GetNamespace()
}

// forDefinition maps a ClaimDefinition to the ModuleClass it is generated from.
func (r *Reconciler) forDefinition(_ context.Context, obj client.Object) []reconcile.Request {
	d, ok := obj.(*apiextv1.ClaimDefinition)
	if !ok || d.Spec.FromModule == nil {
		return nil
	}
	ns := d.Spec.FromModule.ModuleClassRef.Namespace
	if ns == "" {
		ns = definitionNamespace
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: d.Spec.FromModule.ModuleClassRef.Name}}}
}
