package claim

import (
	"context"
	"slices"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

// wantRevision is the class revision mg (nil for a resource still to make) should run.
// The target is the revision rolling out (the class's latest, or the one an undo went
// back to). A new resource and one that names no revision get the target; one that stays
// (Manual) keeps its own, as does every one while the class has made no revision; one
// that follows new revisions (Automatic) gets the target once the rollout lets it on.
// Empty: the class keeps no revisions yet.
func wantRevision(mg resource.Managed, class revision.Class) string {
	rc := class.GetClassRevisions()
	target, ro := rc.LatestRevision, rc.Rollout
	if ro != nil && ro.Revision != "" {
		target = ro.Revision
	}
	if mg == nil {
		return target
	}
	spec := mg.GetManagedSpec()
	policy := common.RevisionPolicyOf(spec.RevisionPolicy, class.GetSpecTemplate().RevisionPolicy)
	switch {
	case spec.Revision == "" || spec.Revision == target:
		return target
	case policy == common.RevisionManual || target == "":
		return spec.Revision
	case ro != nil && ro.Revision == target && (ro.CompletedAt != nil || slices.Contains(ro.Admitted, mg.GetName())):
		return target
	}
	return spec.Revision // until the rollout lets it on
}

// atRevision returns class as it was at the revision mg should run (wantRevision), with
// that revision's name; a class that keeps no revisions is returned as it is. A new
// resource waits for a class's first revision while it is due (revision.FirstDue), so
// that it is not made without one and changed right after.
func (r *Reconciler) atRevision(ctx context.Context, class resource.NonPortableClass, mg resource.Managed, mk *registry.ManagedKind) (resource.NonPortableClass, string, error) {
	rc, ok := class.(revision.Class)
	if !ok {
		return class, "", nil
	}
	name := wantRevision(mg, rc)
	if name == "" && mg == nil && revision.FirstDue(rc) {
		return nil, "", resource.Waitf(ReasonClassRevisionPending, "waiting for %s %s/%s to make its first revision", mk.ClassGVK.Kind, class.GetNamespace(), class.GetName())
	}
	if name == "" {
		return class, "", nil
	}
	ref := common.ClassReference{APIVersion: mk.ClassGVK.GroupVersion().String(), Kind: mk.ClassGVK.Kind, Name: class.GetName(), Namespace: class.GetNamespace()}
	rev, err := revision.Get(ctx, r.client, class.GetNamespace(), name, ref)
	if err != nil {
		return nil, "", err
	}
	at, err := r.overlays.Overlay(rc, rev, mk.NewClass)
	return at, name, err
}
