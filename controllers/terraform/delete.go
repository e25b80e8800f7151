package terraform

import (
	"context"
	"fmt"
	"slices"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// Delete destroys the external resource when the reclaim and management policies say
// so, and the resource is not abandoned. The saved plan and the workspace go in any
// case: the plan holds secret values and nothing will apply it.
func (r *connector) Delete(ctx context.Context, mg resource.Managed) error {
	return r.newRun(mg, nil).delete(ctx)
}

// delete deletes as Delete says.
func (e *run) delete(ctx context.Context) error {
	mg := e.mg
	e.t.locks.forget(mg.GetUID())
	spec := mg.GetManagedSpec()
	switch {
	case e.sit.abandoned:
		e.t.recorder.Eventf(mg, corev1.EventTypeNormal, ReasonAbandoned,
			"released without destroying (annotation %s): the external objects and the Terraform state Secret %s/%s are kept",
			common.AbandonAnnotation, mg.GetNamespace(), resource.StateSecretName(mg))
	case spec.ReclaimPolicy != common.ReclaimRetain && spec.ChangePolicy.Allows(common.ManagementDelete):
		if err := e.destroy(ctx); err != nil {
			return terraformError(err)
		}
	}
	if err := e.t.plans.Remove(ctx, mg); err != nil {
		return err
	}
	if err := e.t.runner.Remove(ctx, workspace.Ref(mg)); err != nil {
		return fmt.Errorf("remove workspace: %w", err)
	}
	return nil
}

// ReasonAbandoned: a deleted resource was released without destroying anything.
const ReasonAbandoned = "Abandoned"

// destroy destroys what mg's state holds and deletes the state. A state that holds no
// resource needs no terraform: nothing can be destroyed, and a module that no longer
// initialises would otherwise block the deletion.
func (e *run) destroy(ctx context.Context) error {
	mg, r := e.mg, e.t
	neverApplied := e.sit.creating
	if e.sit.destroysNothing() {
		return nil // adoption never went through: what exists was never ours to destroy
	}
	if _, err := e.clearStaleLock(ctx); err != nil {
		return err
	}
	if err := e.adoptBeforeDestroy(ctx); err != nil {
		return err
	}
	count, _, err := e.stateResources(ctx)
	if err != nil {
		return err
	}
	if count > 0 {
		ws, err := r.render.Render(ctx, mg)
		if _, user := resource.AsUserError(err); user && neverApplied {
			return nil // nothing was ever applied
		}
		if err != nil {
			return err
		}
		if err := r.runner.Destroy(ctx, ws.Workspace); err != nil {
			return err
		}
		r.recorder.Eventf(mg, corev1.EventTypeNormal, "Destroyed", "terraform destroyed the %d resource(s) in state", count)
	} else if !neverApplied {
		r.recorder.Eventf(mg, corev1.EventTypeNormal, "Destroyed", "the Terraform state holds no resources: nothing to destroy")
	}
	for _, o := range stateObjects(mg) {
		if err := r.client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s: %w", o.GetName(), err)
		}
	}
	return resource.DeleteConnectionSecret(ctx, r.client, mg) // only a Secret mg wrote
}

// stateObjects are the Secret and Lease the kubernetes backend keeps for mg, and the
// Secret that keeps its plans.
func stateObjects(mg resource.Managed) []client.Object {
	name := resource.StateSecretName(mg)
	meta := metav1.ObjectMeta{Name: name, Namespace: mg.GetNamespace()}
	lease := metav1.ObjectMeta{Name: "lock-" + name, Namespace: mg.GetNamespace()}
	plan := metav1.ObjectMeta{Name: resource.PlanSecretName(mg), Namespace: mg.GetNamespace()}
	return []client.Object{&corev1.Secret{ObjectMeta: meta}, &coordinationv1.Lease{ObjectMeta: lease}, &corev1.Secret{ObjectMeta: plan}}
}

// adoptSteps bring into the state, before a destroy, what an interrupted create may have
// made; a recovery import that finds nothing is dropped and the plan made again
// (retryPlan).
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
func (e *run) adoptBeforeDestroy(ctx context.Context) error {
	mg, r := e.mg, e.t
	if !e.sit.pending || e.sit.adopting {
		return nil
	}
	ws, err := r.render.Render(ctx, mg)
	if _, user := resource.AsUserError(err); user {
		e.warnLeftBehind()
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
		e.warnLeftBehind()
		return nil
	}
	inState, err := e.stateAddresses(ctx, ws)
	if err != nil {
		return err
	}
	e.rendered, e.ws, e.rerun = ws, ws, len(imports) == 0
	e.imports = slices.DeleteFunc(imports, func(im common.ImportInstruction) bool { return slices.Contains(inState, im.Address) })
	if err := e.renderImports(ctx); err != nil {
		return err
	}
	_, err = e.retryPlan(ctx, adoptSteps)
	return err
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
func (e *run) warnLeftBehind() {
	e.t.recorder.Eventf(e.mg, corev1.EventTypeWarning, common.ReasonCreateInterrupted,
		"deleted after a create was interrupted before Terraform recorded its result: what that create made outside the state is not destroyed")
}
