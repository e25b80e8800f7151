package managed

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"terraplane.io/terraplane/internal/resource"
)

// applyAndPublish applies mg when the observation says it needs it, then writes the
// connection details the apply (or an up-to-date observation) gave. It returns the
// record of the run the apply made, also when it failed.
func (r *Reconciler) applyAndPublish(ctx context.Context, ext External, mg resource.Managed, obs Observation) (*Run, error) {
	details := obs.ConnectionDetails
	var run *Run
	if !obs.UpToDate {
		applied, err := ext.Apply(ctx, mg)
		if err != nil {
			return applied.Run, err
		}
		details, run = applied.ConnectionDetails, applied.Run
	}
	if details == nil {
		return run, nil
	}
	return run, resource.WriteConnectionSecret(ctx, r.client, mg, r.kind.Class, details)
}

// delete deletes the external resource through the kind's Connector, then lets the
// object go.
func (r *Reconciler) delete(ctx context.Context, mg resource.Managed) error {
	if !controllerutil.ContainsFinalizer(mg, resource.Finalizer) {
		return nil
	}
	if err := r.kind.Connector.Delete(ctx, mg); err != nil {
		return err
	}
	if err := resource.RemoveFinalizer(ctx, r.client, mg); err != nil {
		return err
	}
	resource.ObserveDeletion(resource.ManagedFamily, r.gvk(mg), mg.GetDeletionTimestamp())
	return nil
}

// listAll lists every resource of the kind, for the shards this replica takes.
func (r *Reconciler) listAll(ctx context.Context) ([]client.Object, error) {
	list := r.kind.NewList()
	if err := r.client.List(ctx, list); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	objs := make([]client.Object, 0, len(items))
	for _, it := range items {
		if mg, ok := it.(resource.Managed); ok {
			objs = append(objs, mg)
		}
	}
	return objs, nil
}
