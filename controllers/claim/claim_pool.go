package claim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/resourcepool"
)

// Reasons of claims that name a ResourcePool.
const (
	// ReasonPoolNotFound: spec.poolRef names no ResourcePool in the claim's namespace.
	ReasonPoolNotFound = "PoolNotFound"
	// ReasonPoolKindMismatch: the pool makes claims of another kind.
	ReasonPoolKindMismatch = "PoolKindMismatch"
	// ReasonPoolEmpty (Synced, waiting): no member was ready, so the claim is provisioned
	// from the pool's class ("cold").
	ReasonPoolEmpty = "PoolEmpty"
	// ReasonFilledFromPool (an event): the claim took a ready member of its pool.
	ReasonFilledFromPool = "FilledFromPool"
)

// fromPool fills an unbound claim that names a ResourcePool. It finishes a hand-over to
// this claim that was cut short, or takes a ready member, and then returns true: the
// claim records the member's resource, and that update queues it again. With no member
// ready it returns false and no error, the claim carrying the pool's class, to be
// provisioned like any other claim.
func (r *Reconciler) fromPool(ctx context.Context, claim resource.Claim) (bool, error) {
	pool, err := r.pool(ctx, claim)
	if err != nil {
		return false, err
	}
	members, err := r.poolMembers(ctx, pool)
	if err != nil {
		return false, err
	}
	for _, m := range members {
		if m.TakenBy.UID == claim.GetUID() {
			return true, r.handOver(ctx, claim, pool, m)
		}
	}
	class := ""
	if ref := claim.GetClaimSpec().ClassRef; ref != nil {
		class = ref.Name // a claim naming its class takes only a member of that class
	}
	for _, m := range resourcepool.HandOutOrder(members, string(claim.GetUID()), class) {
		took, err := r.take(ctx, claim, m)
		if err != nil {
			return false, err
		}
		if took {
			return true, r.handOver(ctx, claim, pool, m)
		}
	}
	return false, r.coldClass(claim, pool)
}

// pool reads the ResourcePool the claim names, refusing one in another namespace and
// one of another claim kind.
func (r *Reconciler) pool(ctx context.Context, claim resource.Claim) (*scalingv1.ResourcePool, error) {
	ref := claim.GetClaimSpec().PoolRef
	if ref.Namespace != "" && ref.Namespace != claim.GetNamespace() {
		return nil, resource.UserErrorf(common.ReasonReferenceNotAllowed,
			"spec.poolRef names ResourcePool %s/%s: a claim takes members only from a pool in its own namespace (%s); create the pool there, or remove spec.poolRef.namespace",
			ref.Namespace, ref.Name, claim.GetNamespace())
	}
	pool := &scalingv1.ResourcePool{}
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: claim.GetNamespace(), Name: ref.Name}, pool); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, resource.UserErrorf(ReasonPoolNotFound, "ResourcePool %s (spec.poolRef) does not exist in namespace %s; create it, or remove spec.poolRef",
				ref.Name, claim.GetNamespace())
		}
		return nil, fmt.Errorf("get resource pool: %w", err)
	}
	t := pool.Spec.ClaimTemplate
	if gvk := schema.FromAPIVersionAndKind(t.APIVersion, t.Kind); gvk != r.kind.GVK {
		return nil, resource.UserErrorf(ReasonPoolKindMismatch, "ResourcePool %s makes %s claims (%s), not %s; name a pool of %s claims",
			pool.Name, t.Kind, t.APIVersion, r.kind.GVK.Kind, r.kind.GVK.Kind)
	}
	return pool, nil
}

// poolMembers lists the pool's members as the API server holds them (not the cache), so
// that a member taken a moment ago shows as taken.
func (r *Reconciler) poolMembers(ctx context.Context, pool *scalingv1.ResourcePool) ([]resourcepool.Member, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(r.kind.GVK.GroupVersion().WithKind(r.kind.GVK.Kind + "List"))
	if err := r.reader.List(ctx, list, client.InNamespace(pool.Namespace), client.MatchingLabels{common.PoolLabel: pool.Name}); err != nil {
		return nil, fmt.Errorf("list members of resource pool %s: %w", pool.Name, err)
	}
	members := make([]resourcepool.Member, 0, len(list.Items))
	for i := range list.Items {
		m, err := resourcepool.FromUnstructured(&list.Items[i])
		if err != nil {
			return nil, err
		}
		members = append(members, m)
	}
	return members, nil
}

// take marks member m as handed out to claim: an update checked against the
// resourceVersion m was read at, the hand-out's single commit point. A member changed or
// gone since (another claim took it first) is not taken, and no error.
func (r *Reconciler) take(ctx context.Context, claim resource.Claim, m resourcepool.Member) (bool, error) {
	u := m.Object.DeepCopy()
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[common.PoolMemberTakenByAnnotation] = resourcepool.Taker{Name: claim.GetName(), UID: claim.GetUID()}.String()
	u.SetAnnotations(ann)
	switch err := r.client.Update(ctx, u); {
	case err == nil:
		return true, nil
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("take member %s: %w", m.Name, err)
	}
}

// handOver moves member m's managed resource to claim, which m was taken for: the
// resource's claimRef first, then the claim's resourceRef, then m is deleted. Each step
// is repeated harmlessly, so a hand-over cut short anywhere is finished by the claim's
// next reconcile (or, if the claim is gone, undone by the pool controller).
func (r *Reconciler) handOver(ctx context.Context, claim resource.Claim, pool *scalingv1.ResourcePool, m resourcepool.Member) error {
	mg, err := r.memberResource(ctx, m)
	if err != nil {
		return err
	}
	if mg == nil {
		return r.giveBack(ctx, claim, m)
	}
	kind := mg.GetObjectKind().GroupVersionKind().Kind
	if ref := mg.GetManagedSpec().ClaimRef; ref == nil || ref.UID != claim.GetUID() {
		if ref != nil && ref.UID != m.UID {
			return fmt.Errorf("hand over member %s: %s %s/%s is bound to %s %s, not to the member", m.Name, kind, mg.GetNamespace(), mg.GetName(), ref.Kind, ref.Name)
		}
		mg.GetManagedSpec().ClaimRef = r.claimRef(claim)
		if err := r.client.Update(ctx, mg); err != nil {
			return fmt.Errorf("rebind %s %s/%s: %w", kind, mg.GetNamespace(), mg.GetName(), err)
		}
	}
	ann := claim.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[common.PoolMemberAnnotation] = resourcepool.Fill{Pool: pool.Name, Member: m.Name, UID: m.UID}.String()
	claim.SetAnnotations(ann)
	spec := claim.GetClaimSpec()
	if spec.ClassRef == nil && m.ClassRef != "" {
		spec.ClassRef = &common.LocalReference{Name: m.ClassRef}
	}
	spec.ResourceRef = m.ResourceRef.DeepCopy()
	controllerutil.AddFinalizer(claim, resource.Finalizer)
	if err := r.client.Update(ctx, claim); err != nil {
		return fmt.Errorf("record resourceRef: %w", err)
	}
	resourcepool.ObserveFill(claim.GetNamespace(), pool.Name, resourcepool.FilledWarm)
	r.recorder.Eventf(claim, corev1.EventTypeNormal, ReasonFilledFromPool, "took %s %s of ResourcePool %s, bound to %s %s/%s",
		r.kind.GVK.Kind, m.Name, pool.Name, kind, mg.GetNamespace(), mg.GetName())
	// The member is spent; should this fail, the pool controller deletes it.
	if err := r.client.Delete(ctx, m.Object.DeepCopy(), client.Preconditions{UID: &m.UID}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete handed-out member %s: %w", m.Name, err)
	}
	return nil
}

// memberResource reads m's managed resource; nil when it has none, or it is gone or going.
func (r *Reconciler) memberResource(ctx context.Context, m resourcepool.Member) (resource.Managed, error) {
	ref := m.ResourceRef
	if ref == nil {
		return nil, nil
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	mk, ok := r.reg.Managed(gvk)
	if !ok {
		return nil, fmt.Errorf("member %s: managed kind %s is not registered", m.Name, gvk)
	}
	mg := mk.New()
	if err := r.client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, mg); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get %s of member %s: %w", ref.Kind, m.Name, err)
	}
	mg.GetObjectKind().SetGroupVersionKind(gvk)
	if !mg.GetDeletionTimestamp().IsZero() {
		return nil, nil
	}
	return mg, nil
}

// giveBack undoes claim's take of a member whose resource is gone (or going), so that
// the next reconcile tries another member.
func (r *Reconciler) giveBack(ctx context.Context, claim resource.Claim, m resourcepool.Member) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(m.Object.GroupVersionKind())
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(m.Object), u); err != nil {
		return client.IgnoreNotFound(err)
	}
	if resourcepool.ParseTaker(u.GetAnnotations()[common.PoolMemberTakenByAnnotation]).UID != claim.GetUID() {
		return nil
	}
	ann := u.GetAnnotations()
	delete(ann, common.PoolMemberTakenByAnnotation)
	u.SetAnnotations(ann)
	if err := r.client.Update(ctx, u); err != nil {
		return fmt.Errorf("give member %s back: %w", m.Name, err)
	}
	return resource.Waitf(ReasonPoolEmpty, "member %s of ResourcePool %s has no resource left to hand over; trying another", m.Name, claim.GetClaimSpec().PoolRef.Name)
}

// coldClass gives a claim that names no class the class the pool's members are made
// from, for provisioning with no member ready.
func (r *Reconciler) coldClass(claim resource.Claim, pool *scalingv1.ResourcePool) error {
	if claim.GetClaimSpec().ClassRef != nil || pool.Spec.ClaimTemplate.Spec == nil {
		return nil
	}
	var tmpl struct {
		ClassRef *common.LocalReference `json:"classRef"`
	}
	if err := json.Unmarshal(pool.Spec.ClaimTemplate.Spec.Raw, &tmpl); err != nil {
		return fmt.Errorf("read claim template of resource pool %s: %w", pool.Name, err)
	}
	claim.GetClaimSpec().ClassRef = tmpl.ClassRef
	return nil
}

// coldFill says, while a claim that names a pool waits for a resource provisioned for it
// because no member was ready, that it does.
func (r *Reconciler) coldFill(claim resource.Claim, mg resource.Managed) error {
	ref := claim.GetClaimSpec().PoolRef
	if ref == nil || claim.GetAnnotations()[common.PoolMemberAnnotation] != "" ||
		mg.GetName() != strings.ToLower(r.kind.GVK.Kind)+"-"+string(claim.GetUID()) {
		return nil
	}
	if createSettled(mg.GetManagedStatus().Conditions) {
		return nil
	}
	return resource.Waitf(ReasonPoolEmpty, "no member of ResourcePool %s was ready: %s %s/%s is being provisioned for this claim",
		ref.Name, mg.GetObjectKind().GroupVersionKind().Kind, mg.GetNamespace(), mg.GetName())
}

// rebound is mg as the API server holds it when the cache still shows it bound to the
// pool member the claim took: the cache has not seen the rebinding yet.
func (r *Reconciler) rebound(ctx context.Context, claim resource.Claim, mg resource.Managed) (resource.Managed, error) {
	f, ok := resourcepool.ParseFill(claim.GetAnnotations())
	if ref := mg.GetManagedSpec().ClaimRef; !ok || ref == nil || ref.UID != f.UID {
		return mg, nil
	}
	gvk := mg.GetObjectKind().GroupVersionKind()
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(mg), mg); err != nil {
		return nil, fmt.Errorf("get %s: %w", gvk.Kind, err)
	}
	mg.GetObjectKind().SetGroupVersionKind(gvk)
	return mg, nil
}

// identity is the claim the configurator sees: for a claim filled from a pool, the
// member it took (its name and UID), so that names derived from the claim (a bucket's,
// a database's) stay those the resource was made with.
func identity(claim resource.Claim) resource.Claim {
	f, ok := resourcepool.ParseFill(claim.GetAnnotations())
	if !ok {
		return claim
	}
	c := claim.DeepCopyObject().(resource.Claim)
	c.SetName(f.Member)
	c.SetUID(f.UID)
	return c
}

// handedOut reports whether claim is a pool member handed out to another claim: its
// resource is that claim's, and it waits only to be deleted.
func handedOut(claim client.Object) bool {
	return claim.GetLabels()[common.PoolLabel] != "" && claim.GetAnnotations()[common.PoolMemberTakenByAnnotation] != ""
}
