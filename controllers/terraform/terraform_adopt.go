package terraform

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
)

// adoptSteps bring into the state, before a destroy, what an interrupted create may have
// made; a recovery import that finds nothing is dropped and the plan made again.
var adoptSteps = []step{
	{"plan", (*run).planRecovery},
	{"apply", (*run).apply},
}

// adoptBeforeDestroy brings into the state, before a resource is destroyed, what its
// interrupted create may have made outside it, so that the destroy removes it rather than
// leave it behind on the provider: a kind with a fixed identity imports it, one whose
// create converges runs the create again. A kind with neither, or a resource that no
// longer renders (its Provider gone, say), cannot find it: a Warning event says so, and
// the deletion goes on rather than hang.
func (r *connector) adoptBeforeDestroy(ctx context.Context, mg resource.Managed) error {
	if !pending(mg) || resource.Adopting(mg) {
		return nil
	}
	ws, err := r.render.Render(ctx, mg)
	if _, user := resource.AsUserError(err); user {
		r.warnLeftBehind(mg)
		return nil
	}
	if err != nil {
		return err
	}
	var imports []common.ImportInstruction
	ok := false
	if r.kind.Terraform.RecoverCreate != nil {
		imports, ok = r.kind.Terraform.RecoverCreate(mg, ws.Provider)
	}
	if !ok {
		r.warnLeftBehind(mg)
		return nil
	}
	inState, err := r.stateAddresses(ctx, ws)
	if err != nil {
		return err
	}
	e := &run{t: r, rendered: ws, ws: ws, mg: mg, rerun: len(imports) == 0,
		imports: slices.DeleteFunc(imports, func(im common.ImportInstruction) bool { return slices.Contains(inState, im.Address) })}
	if err := e.renderImports(ctx); err != nil {
		return err
	}
	return e.runSteps(ctx, adoptSteps)
}

// planRecovery plans the recovery: the imports alone (targeted, so nothing missing is
// created only to be destroyed), or the whole create for a kind whose create converges.
// With no import left there is nothing to adopt.
func (e *run) planRecovery(ctx context.Context) (next, error) {
	if len(e.imports) == 0 && !e.rerun {
		return finished, nil
	}
	key, err := e.t.plans.Key(ctx, e.mg.GetNamespace())
	if err != nil {
		return proceed, err
	}
	var targets []string
	for _, im := range e.imports {
		addr, err := render.ResourceAddress(im.Address)
		if err != nil {
			return proceed, err
		}
		targets = append(targets, "module."+render.ModuleName+"."+addr)
	}
	e.plan, err = e.t.runner.Plan(ctx, e.ws.Workspace, engine.PlanOptions{Key: key, Targets: targets})
	if err != nil || !e.plan.HasChanges() {
		return finished, err
	}
	return proceed, nil
}

// warnLeftBehind says, on a resource being deleted, that what its interrupted create
// made outside the state is not destroyed.
func (r *connector) warnLeftBehind(mg resource.Managed) {
	r.recorder.Eventf(mg, corev1.EventTypeWarning, common.ReasonCreateInterrupted,
		"deleted after a create was interrupted before Terraform recorded its result: what that create made outside the state is not destroyed")
}
