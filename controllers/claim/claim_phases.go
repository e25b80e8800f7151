package claim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/resourcepool"
)

// defaultClass writes the namespace's single default class into a claim that names no
// class and no resource.
func (r *Reconciler) defaultClass(ctx context.Context, claim resource.Claim) error {
	spec := claim.GetClaimSpec()
	if spec.ClassRef != nil || spec.ResourceRef != nil {
		return nil
	}
	list := r.kind.NewClassList()
	err := r.cache.List(ctx, list, client.InNamespace(claim.GetNamespace()), // a defined kind's too
		client.MatchingLabels{common.DefaultClassLabel: "true"})
	if err != nil {
		return fmt.Errorf("list default classes: %w", err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("list default classes: %w", err)
	}
	kind := r.kind.ClassGVK.Kind
	switch len(items) {
	case 0:
		return resource.UserErrorf("NoDefaultClass",
			"no %s in namespace %s is labelled %s=true; set spec.classRef.name or label one class as the default",
			kind, claim.GetNamespace(), common.DefaultClassLabel)
	case 1:
		spec.ClassRef = &common.LocalReference{Name: items[0].(client.Object).GetName()}
		if err := r.client.Update(ctx, claim); err != nil {
			return fmt.Errorf("write default class: %w", err)
		}
		return nil
	default:
		names := make([]string, 0, len(items))
		for _, it := range items {
			names = append(names, it.(client.Object).GetName())
		}
		sort.Strings(names)
		return resource.UserErrorf("MultipleDefaultClasses",
			"%d %s objects in namespace %s are labelled %s=true (%s); keep exactly one, or set spec.classRef.name",
			len(items), kind, claim.GetNamespace(), common.DefaultClassLabel, strings.Join(names, ", "))
	}
}

// bind returns the claim's managed resource, provisioning one from its class when the
// claim names none, and binding a statically provisioned one when it does. Having just
// provisioned one, it returns neither resource nor error: the claim update that records
// the resource queues the claim again, and that reconcile, whose cache holds the new
// resource, binds it and writes the claim's status (once, not also now from a cache that
// may not show the resource yet).
func (r *Reconciler) bind(ctx context.Context, claim resource.Claim) (resource.Managed, error) {
	if spec := claim.GetClaimSpec(); spec.ResourceRef == nil && spec.PoolRef != nil {
		if filled, err := r.fromPool(ctx, claim); err != nil || filled {
			return nil, err
		}
	}
	if err := r.defaultClass(ctx, claim); err != nil {
		return nil, err
	}
	if spec := claim.GetClaimSpec(); spec.ResourceRef == nil {
		err := r.provision(ctx, claim)
		if err == nil && spec.PoolRef != nil {
			resourcepool.ObserveFill(claim.GetNamespace(), spec.PoolRef.Name, resourcepool.FilledCold)
		}
		return nil, err
	}
	mg, err := r.boundResource(ctx, claim)
	if err != nil {
		return nil, err
	}
	if mg, err = r.rebound(ctx, claim, mg); err != nil {
		return nil, err
	}
	ref := mg.GetManagedSpec().ClaimRef
	switch {
	case ref != nil && (ref.Namespace != claim.GetNamespace() || ref.Name != claim.GetName() || ref.Kind != r.kind.GVK.Kind):
		return nil, resource.UserErrorf("ResourceBoundElsewhere", "%s %s/%s is bound to %s %s/%s; a resource is bound to one claim only",
			mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName(), ref.Kind, ref.Namespace, ref.Name)
	case ref == nil || ref.UID == "": // unbound, or reserved for this claim by an admin
		if err := r.checkStatic(ctx, claim, mg); err != nil {
			return nil, err
		}
		if err := r.claimStatic(ctx, claim, mg); err != nil {
			return nil, err
		}
	case ref.UID != claim.GetUID():
		return nil, resource.UserErrorf("ResourceReleased", "%s %s/%s was bound to an earlier claim of this name and is %s; Released resources are not re-bound automatically (an admin may clear its spec.claimRef)",
			mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName(), mg.GetManagedStatus().BindingPhase)
	}
	if err := r.syncSpec(ctx, claim, mg); err != nil {
		return mg, err // the bound resource keeps running as it is; the claim says why its edits wait
	}
	if err := r.forwardRequest(ctx, claim, mg); err != nil {
		return mg, err
	}
	if err := r.markBound(ctx, mg); err != nil {
		return mg, err
	}
	return mg, r.coldFill(claim, mg)
}

// syncSpec keeps a dynamically provisioned resource's spec equal to what its claim and
// class make now, so edits to the claim's portable fields and to the class (a new module
// tag, say) reach the resource: the class as it is at the revision the resource should
// run (its latest, or with revisionPolicy Manual the resource's own spec.revision).
// Statically provisioned resources keep what the admin wrote.
// A class that is gone, or now makes another kind, is reported, never passed over: the
// resource keeps running as last configured and the claim's edits wait.
func (r *Reconciler) syncSpec(ctx context.Context, claim resource.Claim, mg resource.Managed) error {
	if claim.GetClaimSpec().ClassRef == nil || mg.GetManagedSpec().ClassRef == nil {
		return nil
	}
	portable, err := r.boundClass(ctx, claim, mg)
	if err != nil {
		return err
	}
	mk, class, err := r.nonPortableClass(ctx, portable)
	if err != nil {
		return err
	}
	if have := mg.GetObjectKind().GroupVersionKind(); mk.GVK != have {
		return resource.UserErrorf(ReasonClassChanged, "%s %s now points at %s %s, which makes %s, not %s: the bound %s %s/%s keeps running as last configured, and edits to this claim wait; point the class back at a %s, or create a new claim",
			r.kind.ClassGVK.Kind, portable.GetName(), portable.GetClassRef().Kind, portable.GetClassRef().Name, mk.GVK.Kind, have.Kind,
			have.Kind, mg.GetNamespace(), mg.GetName(), mg.GetManagedSpec().ClassRef.Kind)
	}
	labels, _, err := recordedLabels(claim) // never chosen again once provisioned
	if err != nil {
		return err
	}
	class, rev, err := r.atRevision(ctx, class, mg, mk)
	if err != nil {
		return err
	}
	want, err := r.configure(registry.Request{Claim: identity(claim), Class: class, ClusterLabels: labels}, mk)
	if err != nil {
		return err
	}
	spec := want.GetManagedSpec()
	spec.ClaimRef = r.claimRef(claim)                                            // the claim itself, whichever identity named the resource
	spec.ApprovedPlan = mg.GetManagedSpec().ApprovedPlan                         // approvals are the resource's own
	spec.RevisionPolicy, spec.Revision = mg.GetManagedSpec().RevisionPolicy, rev // and so is its revision policy
	wantObj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return err
	}
	haveObj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(mg)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(wantObj["spec"], haveObj["spec"]) {
		return nil
	}
	haveObj["spec"] = wantObj["spec"]
	gvk := mg.GetObjectKind().GroupVersionKind()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(haveObj, mg); err != nil {
		return err
	}
	mg.GetObjectKind().SetGroupVersionKind(gvk)
	if err := r.client.Update(ctx, mg); err != nil {
		if apierrors.IsInvalid(err) { // e.g. a class edit that would rename, and so replace, the resource
			return resource.UserErrorf("ChangeRefused", "the claim or its class asks %s %s/%s for a change it refuses, so nothing was changed: %v; undo the edit, or create a new claim",
				mk.GVK.Kind, mg.GetNamespace(), mg.GetName(), invalidCauses(err))
		}
		return fmt.Errorf("update %s: %w", mk.GVK.Kind, err)
	}
	return nil
}

// boundClass reads the portable class a bound claim names; one that is gone is a user
// error that says how to go on.
func (r *Reconciler) boundClass(ctx context.Context, claim resource.Claim, mg resource.Managed) (resource.PortableClass, error) {
	portable := r.kind.NewClass()
	key := types.NamespacedName{Namespace: claim.GetNamespace(), Name: claim.GetClaimSpec().ClassRef.Name}
	if err := r.client.Get(ctx, key, portable); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("get portable class: %w", err)
		}
		kind := mg.GetObjectKind().GroupVersionKind().Kind
		return nil, resource.UserErrorf(ReasonClassNotFound, "%s %s (spec.classRef) no longer exists in namespace %s: the bound %s %s/%s keeps running as last configured, and edits to this claim wait until the claim has a class again; re-create %s %s, or set spec.classRef.name to another %s whose class makes %ss",
			r.kind.ClassGVK.Kind, key.Name, key.Namespace, kind, mg.GetNamespace(), mg.GetName(), r.kind.ClassGVK.Kind, key.Name, r.kind.ClassGVK.Kind, kind)
	}
	return portable, nil
}

// invalidCauses are the field errors of an Invalid API error, one per line.
func invalidCauses(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		return err.Error()
	}
	var msgs []string
	for _, c := range status.Status().Details.Causes {
		msgs = append(msgs, c.Message)
	}
	return strings.Join(msgs, "; ")
}

// boundResource reads the managed resource that resourceRef names.
func (r *Reconciler) boundResource(ctx context.Context, claim resource.Claim) (resource.Managed, error) {
	ref := claim.GetClaimSpec().ResourceRef
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	mk, ok := r.reg.Managed(gvk)
	if _, configurable := r.kind.Configurators[gvk]; !ok || !configurable {
		return nil, resource.UserErrorf("IncompatibleResource", "spec.resourceRef names %s %s, which cannot satisfy a %s", ref.Kind, ref.APIVersion, r.kind.GVK.Kind)
	}
	mg := mk.New()
	key := types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}
	err := r.client.Get(ctx, key, mg)
	if apierrors.IsNotFound(err) {
		// A resource this reconciler has just created can be missing from the cache
		// while the claim's update that names it is there already: ask the API server
		// before telling the user it does not exist.
		err = r.reader.Get(ctx, key, mg)
	}
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, resource.UserErrorf("ResourceNotFound", "%s %s/%s named by spec.resourceRef does not exist", ref.Kind, ref.Namespace, ref.Name)
		}
		return nil, fmt.Errorf("get resource: %w", err)
	}
	mg.GetObjectKind().SetGroupVersionKind(gvk)
	return mg, nil
}

// claimStatic binds an unbound, statically provisioned resource to claim.
func (r *Reconciler) claimStatic(ctx context.Context, claim resource.Claim, mg resource.Managed) error {
	if mg.GetManagedStatus().BindingPhase == common.BindingPhaseReleased {
		return resource.UserErrorf("ResourceReleased", "%s %s/%s is Released; Released resources are not re-bound automatically",
			mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName())
	}
	mg.GetManagedSpec().ClaimRef = r.claimRef(claim)
	if err := r.client.Update(ctx, mg); err != nil {
		return fmt.Errorf("bind resource: %w", err)
	}
	return nil
}

// markBound records the Bound phase on a managed resource that says otherwise. A resource
// the managed reconciler has not looked at yet (no phase) gets it from there, in the status
// write it makes anyway.
func (r *Reconciler) markBound(ctx context.Context, mg resource.Managed) error {
	if mg.GetManagedStatus().BindingPhase == "" {
		return nil
	}
	return r.setPhase(ctx, mg, common.BindingPhaseBound)
}

func (r *Reconciler) setPhase(ctx context.Context, mg resource.Managed, phase common.BindingPhase) error {
	if mg.GetManagedStatus().BindingPhase == phase {
		return nil
	}
	patch := []byte(fmt.Sprintf(`{"status":{"bindingPhase":%q}}`, phase))
	if err := r.client.Status().Patch(context.WithoutCancel(ctx), mg, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("set binding phase: %w", err)
	}
	return nil
}

// owner stands for claim as the owner of its connection Secret, its kind taken from the
// registration, which a defined kind has no Go type in the scheme for.
func (r *Reconciler) owner(claim resource.Claim) client.Object {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: r.kind.GVK.GroupVersion().String(), Kind: r.kind.GVK.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: claim.GetName(), Namespace: claim.GetNamespace(), UID: claim.GetUID()},
	}
}

// delete honours the bound resource's reclaim policy, then lets the claim go.
func (r *Reconciler) delete(ctx context.Context, claim resource.Claim) error {
	if !controllerutil.ContainsFinalizer(claim, resource.Finalizer) {
		return nil
	}
	if claim.GetClaimSpec().ResourceRef != nil {
		if err := r.release(ctx, claim); err != nil {
			return err
		}
	}
	if err := r.deleteConnectionSecret(ctx, claim); err != nil {
		return err
	}
	if err := resource.RemoveFinalizer(ctx, r.client, claim); err != nil {
		return err
	}
	resource.ObserveDeletion(resource.ClaimFamily, r.kind.GVK, claim.GetDeletionTimestamp())
	return nil
}

// release deletes (policy Delete, waiting until it is gone) or releases (Retain) the bound resource.
func (r *Reconciler) release(ctx context.Context, claim resource.Claim) error {
	mg, err := r.boundResource(ctx, claim)
	if _, user := resource.AsUserError(err); user {
		return nil // nothing bound that still exists
	}
	if err != nil {
		return err
	}
	ref := mg.GetManagedSpec().ClaimRef
	if ref == nil || ref.UID != claim.GetUID() {
		return nil // never bound to this claim
	}
	if mg.GetManagedSpec().ReclaimPolicy == common.ReclaimRetain {
		return r.setPhase(ctx, mg, common.BindingPhaseReleased)
	}
	if mg.GetDeletionTimestamp().IsZero() {
		if err := r.client.Delete(ctx, mg); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s: %w", ref.Kind, err)
		}
		return waitingForDestroy(mg)
	}
	return destroyBlocked(mg)
}

// destroyBlocked says what a claim's deletion waits for: the bound resource's destroy,
// or, when that failed (its Provider or credentials are gone, say), why it failed.
func destroyBlocked(mg resource.Managed) error {
	kind := mg.GetObjectKind().GroupVersionKind().Kind
	synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced)
	if synced != nil && synced.Status == metav1.ConditionFalse && synced.ObservedGeneration == mg.GetGeneration() {
		return resource.UserErrorf(ReasonDeletionBlocked, "this claim is deleted once %s %s/%s is destroyed, and that fails (%s): %s",
			kind, mg.GetNamespace(), mg.GetName(), synced.Reason, synced.Message)
	}
	return waitingForDestroy(mg)
}

// waitingForDestroy says that a claim's deletion waits for mg's destroy.
func waitingForDestroy(mg resource.Managed) error {
	return resource.Waitf("Deleting", "waiting for %s %s/%s to be destroyed", mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName())
}

// claimsIn lists the claims of this kind in namespace that match keep.
func (r *Reconciler) claimsIn(ctx context.Context, namespace string, keep func(resource.Claim) bool) []reconcile.Request {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(r.kind.GVK.GroupVersion().WithKind(r.kind.GVK.Kind + "List"))
	if err := r.client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, item := range list.Items {
		claim := r.kind.New()
		if err := r.client.Get(ctx, client.ObjectKeyFromObject(&item), claim); err == nil && keep(claim) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&item)})
		}
	}
	return reqs
}
