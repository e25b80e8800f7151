package terraform

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/planstore"
	"terraplane.io/terraplane/internal/render"
)

// publish counts the resources the run left in the state, writes non-sensitive outputs
// to status.atProvider and returns the connection details; nil when the run read no
// outputs, which leaves both as they are.
func (e *run) publish(ctx context.Context) (map[string][]byte, error) {
	if err := e.countResources(ctx); err != nil {
		return nil, err
	}
	mg, out := e.mg, e.out
	if out.outputs == nil {
		return nil, nil
	}
	atProvider := map[string]any{}
	data := map[string][]byte{}
	keys := e.t.kind.Terraform.ConnectionKeys
	if e.t.kind.Terraform.ConnectionKeysFor != nil {
		keys = e.t.kind.Terraform.ConnectionKeysFor(mg)
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
	for k, v := range e.t.kind.Terraform.ProviderConnection(mg, e.ws.Provider) {
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

// countResources counts the resources an apply left in the state, from the state
// itself: what terraform says it added counts only this run's, which after an earlier
// failed create is not all there is.
func (e *run) countResources(ctx context.Context) error {
	if e.out.applied == nil {
		return nil
	}
	n, found, err := e.stateResources(ctx)
	if found {
		e.out.applied.Resources = n
	}
	return err
}

// record is the record of the run, which the reconciler writes with the outcome (see
// managed.Run): status.terraform, what the run says of drift and what it found gone,
// and, on success, the inputs and revision it settles; nil when terraform made no plan
// and applied nothing, so that a reconcile from a stale copy that stopped before
// terraform ran writes none of that copy's status back.
func (e *run) record() *managed.Run {
	if e.out.plan == nil && e.out.applied == nil {
		return nil // no terraform command ran (a lock held, a create recorded from a stale copy): nothing to record
	}
	tf := *e.mg.GetManagedStatus().Terraform.DeepCopy()
	now := metav1.Now()
	tf.LastPlanTime = &now
	tf.LastHandledRequest = e.mg.GetAnnotations()[common.RequestedAtAnnotation]
	e.recordPlan(&tf, now)
	if e.out.lock != nil {
		tf.ProviderLock = string(e.out.lock)
	}
	rec := &managed.Run{Missing: e.missing()}
	switch plan := e.out.plan; {
	case e.out.applied != nil:
		e.recordApply(&tf, now)
		rec.Drift = managed.DriftNone
	case plan != nil && plan.ChangesInfrastructure() && (e.out.drift || e.sit.reason == common.PlanDrift || len(plan.Gone) > 0):
		rec.Drift, rec.DriftMessage = managed.DriftFound, driftMessage(plan)
	}
	if !e.out.drift {
		rec.Settle = &managed.Settled{InputsHash: e.rendered.Hash, Revision: e.rendered.Revision}
	}
	rec.Terraform = tf
	return rec
}

// recordPlan records the run's plan with changes, and what the plan policies said of it.
func (e *run) recordPlan(tf *common.TerraformStatus, now metav1.Time) {
	plan := e.out.plan
	if plan == nil || !plan.HasChanges() {
		return
	}
	if tf.Plan == nil || tf.Plan.ID != plan.ID {
		tf.Plan = planstore.Summary(plan.ID, e.sit.reason, plan.Changes, e.rendered.Hash, now)
		tf.Plan.Providers = planstore.ProviderSummary(plan.ProviderChanges)
	}
	tf.Plan.Policies, tf.Plan.PoliciesHash = nil, ""
	if e.out.policies != nil {
		tf.Plan.Policies, tf.Plan.PoliciesHash = policyResults(e.out.policies.results), e.out.policies.hash
	}
}

// recordApply records what the run applied.
func (e *run) recordApply(tf *common.TerraformStatus, now metav1.Time) {
	res, id := e.out.applied, e.appliedID()
	if e.out.plan == nil { // a create without a saved plan, checked inside its apply when policies matched
		tf.Plan = planstore.Summary(id, e.sit.reason, res.Changes, e.rendered.Hash, now)
		if e.out.policies != nil {
			tf.Plan.Policies, tf.Plan.PoliciesHash = policyResults(e.out.policies.results), e.out.policies.hash
		}
	}
	c := engine.CountChanges(res.Changes)
	tf.LastApply = &common.ApplySummary{ID: id, Add: c.Add, Change: c.Change, Destroy: c.Destroy, Replace: c.Replace, Time: now}
	tf.LastApplyTime = &now
	if res.Resources >= 0 {
		tf.Resources = res.Resources
	}
}

// missing says which objects the run found deleted outside Terraform and did not
// recreate: its plan's, unless it applied it.
func (e *run) missing() string {
	if e.out.plan == nil || len(e.out.plan.Gone) == 0 || e.out.applied != nil {
		return ""
	}
	return goneMessage(e.out.plan, "not recreated yet")
}

// recordLocks keeps the lock the run left the resource with where its kind keeps its
// module's (a ModuleClass's status), and offers its class the newer provider versions
// its plan found, if the kind does either; a failure only means a later run does it.
func (e *run) recordLocks(ctx context.Context) {
	tk := e.t.kind.Terraform
	if e.out.lock != nil && tk.RecordLock != nil {
		if err := tk.RecordLock(ctx, e.t.client, e.mg, e.out.lock); err != nil {
			log.FromContext(ctx).Info("could not record the provider lock", "error", err.Error())
		}
	}
	if e.plan != nil && e.plan.Upgrade != nil && tk.OfferUpgrade != nil {
		if err := tk.OfferUpgrade(ctx, e.t.client, e.mg, e.plan.Upgrade); err != nil {
			log.FromContext(ctx).Info("could not offer the class newer provider versions", "error", err.Error())
		}
	}
}
