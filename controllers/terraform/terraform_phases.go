package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// outcome is what one sync did.
type outcome struct {
	// ran is true when terraform ran.
	ran bool
	// hash is the inputs hash the sync worked from, and revision the class revision.
	hash, revision string
	// reason is why it planned.
	reason common.PlanReason
	// plan is the plan it made or applied; nil for a create without a saved plan.
	plan *engine.Plan
	// applied is what an apply did; nil when nothing was applied.
	applied *engine.Result
	// outputs to publish; nil leaves status.atProvider and the Secret as they are.
	outputs map[string]engine.Output
	// drift is a plan of drift that the management policies leave uncorrected.
	drift bool
	// lock is the dependency lock the resource now runs with: a plan's that found nothing
	// to change, or an apply's; nil leaves status.terraform.providerLock as it is.
	lock []byte
	// policies is what the plan policies said about plan; nil when none matched.
	policies *policyCheck
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

// due reports whether terraform must run: never planned, an approved plan waits, the
// inputs or the class revision changed, the last run failed, a held plan's spec was edited, or the drift
// interval has passed. Otherwise it says when to look again.
func (r *connector) due(mg resource.Managed, hash string) (bool, time.Duration) {
	st := mg.GetManagedStatus()
	tf := st.Terraform
	if tf.LastPlanTime == nil || requested(mg) {
		return true, 0
	}
	if pending := pendingPlan(mg); pending != nil {
		synced := meta.FindStatusCondition(st.Conditions, common.TypeSynced)
		if mg.GetManagedSpec().ApprovedPlan == pending.ID || pending.InputsHash != hash ||
			synced == nil || synced.ObservedGeneration != mg.GetGeneration() {
			return true, 0
		}
	} else if tf.InputsHash != hash || st.Revision != mg.GetManagedSpec().Revision ||
		!meta.IsStatusConditionTrue(st.Conditions, common.TypeSynced) || !resource.IsReady(st.Conditions) {
		return true, 0
	}
	interval := r.driftInterval(mg)
	next := tf.LastPlanTime.Add(interval)
	if wait := time.Until(next); wait > 0 {
		return false, wait + jitter(interval)
	}
	return true, 0
}

// driftInterval is how often mg is planned while unchanged: its spec.driftInterval, or
// the controller's.
func (r *connector) driftInterval(mg resource.Managed) time.Duration {
	return mg.GetManagedSpec().Timing.DriftIntervalOr(r.opts.DriftInterval)
}

// requested reports whether the user asked for a plan the last run did not answer.
func requested(mg resource.Managed) bool {
	req := mg.GetAnnotations()[common.RequestedAtAnnotation]
	return req != "" && req != mg.GetManagedStatus().Terraform.LastHandledRequest
}

// jitter spreads drift checks over a tenth of the interval.
func jitter(d time.Duration) time.Duration {
	return time.Duration(rand.Int64N(int64(d)/10 + 1))
}

// discardUnapplied drops the saved plan of mg's latest plan with changes when it was
// never applied: a plan without changes replaces it.
func (r *connector) discardUnapplied(ctx context.Context, mg resource.Managed) error {
	tf := mg.GetManagedStatus().Terraform
	if tf.Plan == nil || tf.LastApply != nil && tf.LastApply.ID == tf.Plan.ID {
		return nil
	}
	return r.plans.Discard(ctx, mg)
}

// planFor returns the saved plan that spec.approvedPlan approves, when it was made from
// the current inputs; otherwise a new plan.
func (r *connector) planFor(ctx context.Context, mg resource.Managed, ws *workspace.Rendered, reason common.PlanReason) (*engine.Plan, error) {
	if pending := pendingPlan(mg); pending != nil && pending.ID == mg.GetManagedSpec().ApprovedPlan && pending.InputsHash == ws.Hash {
		saved, hash, err := r.plans.Load(ctx, mg)
		if err != nil {
			return nil, err
		}
		if saved != nil && saved.ID == pending.ID && hash == ws.Hash {
			return saved, nil
		}
	}
	plan, err := r.newPlan(ctx, mg, ws)
	if err == nil && (reason == common.PlanDrift || len(plan.Gone) > 0) && plan.HasChanges() {
		r.driftDetected(mg, plan)
	}
	return plan, err
}

// newPlan makes a plan of ws, reading the outputs too when there is nothing to apply and
// the inputs changed since the last apply (their values may follow the inputs).
func (r *connector) newPlan(ctx context.Context, mg resource.Managed, ws *workspace.Rendered) (*engine.Plan, error) {
	key, err := r.plans.Key(ctx, mg.GetNamespace())
	if err != nil {
		return nil, err
	}
	tf := mg.GetManagedStatus().Terraform
	return r.runner.Plan(ctx, ws.Workspace, engine.PlanOptions{Key: key, Outputs: tf.InputsHash != ws.Hash || tf.LastApplyTime == nil,
		UpgradeProviders: offersUpgrades(mg)})
}

// offersUpgrades reports whether mg's plans are made with newer provider versions than its
// lock holds, when there are any: once it exists (a create uses its module's lock) and may
// be updated. Such a plan waits for approval (decide, ProviderUpgrade).
func offersUpgrades(mg resource.Managed) bool {
	return !creating(mg) && mg.GetManagedSpec().ChangePolicy.Allows(common.ManagementUpdate)
}

// createsDirectly reports whether mg is created with one combined plan-and-apply: its
// first apply, applied automatically, with nothing to adopt and creating allowed.
func createsDirectly(mg resource.Managed) bool {
	policy := mg.GetManagedSpec().ChangePolicy
	return creating(mg) && !resource.Adopting(mg) && policy.ApprovalOf() == common.ApprovalAutomatic &&
		policy.Allows(common.ManagementCreate) && mg.GetManagedSpec().ApprovedPlan == ""
}

// publish writes non-sensitive outputs to status.atProvider and returns the connection
// details; nil when the sync read no outputs, which leaves both as they are.
func (r *connector) publish(mg resource.Managed, ws *workspace.Rendered, out outcome) (map[string][]byte, error) {
	if out.outputs == nil {
		return nil, nil
	}
	atProvider := map[string]any{}
	data := map[string][]byte{}
	keys := r.kind.Terraform.ConnectionKeys
	if r.kind.Terraform.ConnectionKeysFor != nil {
		keys = r.kind.Terraform.ConnectionKeysFor(mg)
	}
	for name, o := range out.outputs {
		var v any
		if err := json.Unmarshal(o.Value, &v); err != nil || v == nil {
			continue
		}
		if !o.Sensitive {
			atProvider[render.Camel(name)] = v
		}
		key, ok := keys[name]
		if keys == nil {
			key, ok = name, true // no mapping: every output under its own name
		}
		if ok {
			if s := secretValue(v); s != "" {
				data[key] = []byte(s)
			}
		}
	}
	for k, v := range r.kind.Terraform.ProviderConnection(mg, ws.Provider) {
		if _, ok := data[k]; !ok {
			data[k] = v
		}
	}
	if err := mg.SetAtProvider(atProvider); err != nil {
		return nil, fmt.Errorf("set atProvider: %w", err)
	}
	return data, nil
}

func secretValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return strings.TrimSpace(string(b))
}

// Delete destroys the external resource when the reclaim and management policies say
// so, and the resource is not abandoned. The saved plan and the workspace go in any
// case: the plan holds secret values and nothing will apply it.
func (r *connector) Delete(ctx context.Context, mg resource.Managed) error {
	r.locks.forget(mg.GetUID())
	spec := mg.GetManagedSpec()
	switch {
	case abandoned(mg):
		r.recorder.Eventf(mg, corev1.EventTypeNormal, ReasonAbandoned,
			"released without destroying (annotation %s): the external objects and the Terraform state Secret %s/%s are kept",
			common.AbandonAnnotation, mg.GetNamespace(), resource.StateSecretName(mg))
	case spec.ReclaimPolicy != common.ReclaimRetain && spec.ChangePolicy.Allows(common.ManagementDelete):
		if err := r.destroy(ctx, mg); err != nil {
			return terraformError(err)
		}
	}
	if err := r.plans.Remove(ctx, mg); err != nil {
		return err
	}
	if err := r.runner.Remove(ctx, workspace.Ref(mg)); err != nil {
		return fmt.Errorf("remove workspace: %w", err)
	}
	return nil
}

// ReasonAbandoned: a deleted resource was released without destroying anything.
const ReasonAbandoned = "Abandoned"

// abandoned reports whether mg is to be released, not destroyed, when deleted.
func abandoned(mg resource.Managed) bool {
	return mg.GetAnnotations()[common.AbandonAnnotation] == "true"
}

// destroy destroys what mg's state holds and deletes the state. A state that holds no
// resource needs no terraform: nothing can be destroyed, and a module that no longer
// initialises would otherwise block the deletion.
func (r *connector) destroy(ctx context.Context, mg resource.Managed) error {
	st := mg.GetManagedStatus().Terraform
	neverApplied := st.InputsHash == "" && st.LastApplyTime == nil
	if neverApplied && resource.Adopting(mg) {
		return nil // adoption never went through: what exists was never ours to destroy
	}
	if err := r.clearStaleLock(ctx, mg); err != nil {
		return err
	}
	if err := r.adoptBeforeDestroy(ctx, mg); err != nil {
		return err
	}
	count, _, err := r.stateResources(ctx, mg)
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

func forEach(list client.ObjectList, fn func(resource.Managed)) error {
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	for _, it := range items {
		if mg, ok := it.(resource.Managed); ok {
			fn(mg)
		}
	}
	return nil
}
