package claim

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// checkStatic refuses to bind claim to an unreserved resource (spec.claimRef empty) in
// another namespace unless the resource's spec.allowedNamespaces admits the claim's
// namespace. A resource reserved for this claim is bound without it: bind has checked
// that the reservation names this claim.
func (r *Reconciler) checkStatic(ctx context.Context, claim resource.Claim, mg resource.Managed) error {
	spec := mg.GetManagedSpec()
	if spec.ClaimRef != nil {
		return nil
	}
	ok, err := resource.NamespaceAllowed(ctx, r.client, spec.AllowedNamespaces, mg.GetNamespace(), claim.GetNamespace())
	if err != nil || ok {
		return err
	}
	kind := mg.GetObjectKind().GroupVersionKind().Kind
	return resource.UserErrorf(common.ReasonReferenceNotAllowed,
		"spec.resourceRef names %s %s/%s, which is neither reserved for this claim (its spec.claimRef) nor allows claims from namespace %s (its spec.allowedNamespaces); an admin may reserve it for this claim or allow the namespace, or name a resource in namespace %s",
		kind, mg.GetNamespace(), mg.GetName(), claim.GetNamespace(), claim.GetNamespace())
}

// checkClass refuses a portable class's classRef to a non-portable class in another
// namespace whose allowedNamespaces does not admit the portable class's namespace.
func (r *Reconciler) checkClass(ctx context.Context, portable resource.PortableClass, class resource.NonPortableClass) error {
	ref := portable.GetClassRef()
	return resource.CheckReference(ctx, r.client, class.GetAllowedNamespaces(),
		fmt.Sprintf("classRef of %s %s", r.kind.ClassGVK.Kind, portable.GetName()),
		fmt.Sprintf("%s %s/%s", ref.Kind, class.GetNamespace(), class.GetName()),
		class.GetNamespace(), portable.GetNamespace())
}

// forManagedOf maps a managed resource of kind mk to its claim; an unbound one that
// consents to other namespaces also to the claims whose spec.resourceRef names it, so
// that consent given while they wait takes effect at once.
func (r *Reconciler) forManagedOf(mk *registry.ManagedKind) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		mg, ok := obj.(resource.Managed)
		if !ok {
			return nil
		}
		if spec := mg.GetManagedSpec(); spec.ClaimRef != nil || spec.AllowedNamespaces == nil {
			return r.forManaged(ctx, obj)
		}
		return r.claimsIn(ctx, "", func(c resource.Claim) bool {
			ref := c.GetClaimSpec().ResourceRef
			return ref != nil && ref.Kind == mk.GVK.Kind && ref.Namespace == mg.GetNamespace() && ref.Name == mg.GetName()
		})
	}
}
