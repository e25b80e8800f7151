package claim

import (
	"context"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/revision"
)

// wantRevision is the class revision mg (nil for a resource still to make) should run:
// the class's latest for a new resource, for one that names none, and for one that
// follows new revisions (Automatic); its own for one that stays (Manual), or while the
// class has made no revision. Empty: the class keeps no revisions yet.
func wantRevision(mg resource.Managed, class revision.Class) string {
	latest := class.GetClassRevisions().LatestRevision
	if mg == nil {
		return latest
	}
	spec := mg.GetManagedSpec()
	policy := common.RevisionPolicyOf(spec.RevisionPolicy, class.GetSpecTemplate().RevisionPolicy)
	if spec.Revision != "" && (policy == common.RevisionManual || latest == "") {
		return spec.Revision
	}
	return latest
}

// atRevision returns class as it was at the revision mg should run (wantRevision), with
// that revision's name; a class that keeps no revisions is returned as it is.
func (r *Reconciler) atRevision(ctx context.Context, class resource.NonPortableClass, mg resource.Managed, mk *registry.ManagedKind) (resource.NonPortableClass, string, error) {
	rc, ok := class.(revision.Class)
	if !ok {
		return class, "", nil
	}
	name := wantRevision(mg, rc)
	if name == "" {
		return class, "", nil
	}
	ref := common.ClassReference{APIVersion: mk.ClassGVK.GroupVersion().String(), Kind: mk.ClassGVK.Kind, Name: class.GetName(), Namespace: class.GetNamespace()}
	rev, err := revision.Get(ctx, r.client, class.GetNamespace(), name, ref)
	if err != nil {
		return nil, "", err
	}
	at, err := revision.Overlay(rc, rev, mk.NewClass)
	return at, name, err
}
