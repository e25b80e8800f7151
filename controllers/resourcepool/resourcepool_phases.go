package resourcepool

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/resourcepool"
)

// Reasons of ResourcePools.
const (
	// ReasonNotAClaimKind: spec.claimTemplate names a kind that is not a claim kind.
	ReasonNotAClaimKind = "NotAClaimKind"
	// ReasonInvalidTemplate: the template's spec is refused, by the pool or by the claim kind's CRD.
	ReasonInvalidTemplate = "InvalidTemplate"
	// ReasonScaledUp and ReasonScaledDown (events): members were made or removed.
	ReasonScaledUp   = "ScaledUp"
	ReasonScaledDown = "ScaledDown"
)

// pass is what one reconcile of a pool learns, phase by phase.
type pass struct {
	pool *scalingv1.ResourcePool
	kind *registry.ClaimKind
	// spec is the template's spec as a JSON object.
	spec map[string]any
	// members are the pool's members; claims are every claim of the kind in the
	// namespace, by name (the takers of members among them).
	members []resourcepool.Member
	claims  map[string]*unstructured.Unstructured
	// counted is set once counts hold the members' counts.
	counted  bool
	counts   resourcepool.Counts
	decision resourcepool.Decision
	// auto is an autoscaled pool's decision; nil for other pools.
	auto  *resourcepool.AutoscaleDecision
	notes []resource.Note
}

// checkTemplate refuses a template whose kind is not a claim kind served here, or whose
// spec is not an object or names a pool or a resource.
func (r *Reconciler) checkTemplate(_ context.Context, p *pass) error {
	t := p.pool.Spec.ClaimTemplate
	gvk := schema.FromAPIVersionAndKind(t.APIVersion, t.Kind)
	kind, ok := r.reg.Claim(gvk)
	if !ok {
		return resource.UserErrorf(ReasonNotAClaimKind, "spec.claimTemplate names %s %s, which is not a claim kind: name a claim kind (Bucket, PostgreSQLInstance, ... or one a ClaimDefinition defines)",
			t.Kind, t.APIVersion)
	}
	p.kind, p.spec = kind, map[string]any{}
	if t.Spec != nil && len(t.Spec.Raw) > 0 {
		if err := json.Unmarshal(t.Spec.Raw, &p.spec); err != nil || p.spec == nil {
			return resource.UserErrorf(ReasonInvalidTemplate, "spec.claimTemplate.spec is not a JSON object")
		}
	}
	for _, f := range []string{"poolRef", "resourceRef"} {
		if _, ok := p.spec[f]; ok {
			return resource.UserErrorf(ReasonInvalidTemplate, "spec.claimTemplate.spec sets %s: members are provisioned from their class, never filled from a pool or bound statically; remove it", f)
		}
	}
	return nil
}

// watchMembers makes sure the members' kind is watched.
func (r *Reconciler) watchMembers(_ context.Context, p *pass) error {
	return r.watches.watch(p.kind)
}

// readMembers lists the claims of the template's kind in the pool's namespace from the
// API server: the pool's members, and the claims that may have taken them.
func (r *Reconciler) readMembers(ctx context.Context, p *pass) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(p.kind.GVK.GroupVersion().WithKind(p.kind.GVK.Kind + "List"))
	if err := r.reader.List(ctx, list, client.InNamespace(p.pool.Namespace)); err != nil {
		return fmt.Errorf("list %s claims: %w", p.kind.GVK.Kind, err)
	}
	p.claims = map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		u := &list.Items[i]
		p.claims[u.GetName()] = u
		if u.GetLabels()[common.PoolLabel] != p.pool.Name {
			continue
		}
		m, err := resourcepool.FromUnstructured(u)
		if err != nil {
			return err
		}
		p.members = append(p.members, m)
	}
	return nil
}

// settle finishes or undoes each hand-out of a member: a member whose claim records it
// is deleted; a member whose claim is gone (or took another, or is going without one) is
// given back to the pool, its resource rebound to it. A hand-over under way is left to
// the claim reconciler.
func (r *Reconciler) settle(ctx context.Context, p *pass) error {
	for _, m := range p.members {
		if m.State != resourcepool.HandedOut {
			continue
		}
		switch done, alive := r.taker(p, m); {
		case done:
			if err := r.client.Delete(ctx, m.Object.DeepCopy(), client.Preconditions{UID: &m.UID}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete handed-out member %s: %w", m.Name, err)
			}
		case !alive:
			if err := r.giveBack(ctx, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// taker says whether m's hand-out is done (its claim records m) and whether the claim
// it was taken for still wants it (exists, is not going without a resource, and took no
// other member).
func (r *Reconciler) taker(p *pass, m resourcepool.Member) (done, alive bool) {
	u, ok := p.claims[m.TakenBy.Name]
	if !ok || u.GetUID() != m.TakenBy.UID {
		return false, false
	}
	if f, filled := resourcepool.ParseFill(u.GetAnnotations()); filled {
		return f.UID == m.UID, f.UID == m.UID
	}
	_, hasRef, _ := unstructured.NestedMap(u.Object, "spec", "resourceRef")
	return false, u.GetDeletionTimestamp().IsZero() || hasRef
}

// giveBack returns a member whose taker is gone to the pool: its resource is bound to it
// again (if the hand-over had got that far), then the taken mark is removed.
func (r *Reconciler) giveBack(ctx context.Context, m resourcepool.Member) error {
	if ref := m.ResourceRef; ref != nil {
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		if mk, ok := r.reg.Managed(gvk); ok {
			mg := mk.New()
			err := r.client.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, mg)
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("get %s of member %s: %w", ref.Kind, m.Name, err)
			}
			if cr := mg.GetManagedSpec().ClaimRef; err == nil && cr != nil && cr.UID == m.TakenBy.UID {
				cr.Name, cr.UID = m.Name, m.UID
				if err := r.client.Update(ctx, mg); err != nil {
					return fmt.Errorf("rebind %s %s to member %s: %w", ref.Kind, ref.Name, m.Name, err)
				}
			}
		}
	}
	u := m.Object.DeepCopy()
	ann := u.GetAnnotations()
	delete(ann, common.PoolMemberTakenByAnnotation)
	u.SetAnnotations(ann)
	if err := r.client.Update(ctx, u); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("give member %s back: %w", m.Name, err)
	}
	return nil
}

// count counts the members by state, and returns the spare ones (not handed out).
func (p *pass) count() []resourcepool.Member {
	var spare []resourcepool.Member
	handedOut := map[types.UID]bool{}
	for _, m := range p.members {
		if m.State == resourcepool.HandedOut {
			handedOut[m.TakenBy.UID] = true
		} else {
			spare = append(spare, m)
		}
	}
	for _, u := range p.claims {
		if f, ok := resourcepool.ParseFill(u.GetAnnotations()); ok && f.Pool == p.pool.Name {
			handedOut[u.GetUID()] = true
		}
	}
	p.counts, p.counted = resourcepool.Count(spare, int32(len(handedOut))), true
	return spare
}

// scale counts the members and makes or removes as many as Decide says; an autoscaled
// pool is sized by autoscale instead.
func (r *Reconciler) scale(ctx context.Context, p *pass) error {
	if p.pool.Spec.Autoscale != nil {
		return r.autoscale(ctx, p)
	}
	spare := p.count()
	p.decision = resourcepool.Decide(p.counts, p.pool.Spec)
	ns, name := p.pool.Namespace, p.pool.Name
	for range p.decision.Create {
		if _, err := r.createMember(ctx, p); err != nil {
			return err
		}
		p.counts.Provisioning++
		resourcepool.ObserveScale(ns, name, "up", p.decision.Reason, 1)
	}
	if p.decision.Create > 0 {
		p.note(corev1.EventTypeNormal, ReasonScaledUp, "made %d %s member(s): %s", p.decision.Create, p.kind.GVK.Kind, p.decision.Reason)
	}
	removed := resourcepool.ToRemove(spare, p.decision.Delete)
	for _, m := range removed {
		// Only the version read: a member taken meanwhile is not removed.
		err := r.client.Delete(ctx, m.Object.DeepCopy(), client.Preconditions{UID: &m.UID, ResourceVersion: &m.ResourceVersion})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("remove member %s: %w", m.Name, err)
		}
		resourcepool.ObserveScale(ns, name, "down", p.decision.Reason, 1)
	}
	if len(removed) > 0 {
		p.note(corev1.EventTypeNormal, ReasonScaledDown, "removed %d %s member(s): %s", len(removed), p.kind.GVK.Kind, p.decision.Reason)
	}
	return nil
}

// createMember makes one member from the template: owned by the pool, labelled with its
// name, writing its connection Secret under its own name (so that a claim taking it has
// one to copy). It returns the member's name.
func (r *Reconciler) createMember(ctx context.Context, p *pass) (string, error) {
	t := p.pool.Spec.ClaimTemplate
	name := p.pool.Name + "-" + utilrand.String(5)
	spec := runtime.DeepCopyJSON(p.spec)
	spec["writeConnectionSecretToRef"] = map[string]any{"name": name}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(p.kind.GVK)
	u.SetNamespace(p.pool.Namespace)
	u.SetName(name)
	labels := maps.Clone(t.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[common.PoolLabel] = p.pool.Name
	u.SetLabels(labels)
	ref := metav1.NewControllerRef(p.pool, scalingv1.ResourcePoolGroupVersionKind)
	ref.BlockOwnerDeletion = nil
	u.SetOwnerReferences([]metav1.OwnerReference{*ref})
	if err := r.client.Create(ctx, u); err != nil {
		if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
			return "", resource.UserErrorf(ReasonInvalidTemplate, "a %s made from spec.claimTemplate is refused: %v", p.kind.GVK.Kind, err)
		}
		return "", fmt.Errorf("create member: %w", err)
	}
	return name, nil
}

// note records an event to send once the status is written.
func (p *pass) note(typ, reason, format string, args ...any) {
	p.notes = append(p.notes, resource.Note{Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...)})
}
