package managed

import (
	"context"
	"encoding/json"
	"errors"
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
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// outcome is what one sync did.
type outcome struct {
	ran     bool
	hash    string
	changed bool
	outputs map[string]engine.Output
}

// stateObjects are the Secret and Lease the kubernetes backend keeps for mg.
func stateObjects(mg resource.Managed) []client.Object {
	name := resource.StateSecretName(mg)
	meta := metav1.ObjectMeta{Name: name, Namespace: mg.GetNamespace()}
	lease := metav1.ObjectMeta{Name: "lock-" + name, Namespace: mg.GetNamespace()}
	return []client.Object{&corev1.Secret{ObjectMeta: meta}, &coordinationv1.Lease{ObjectMeta: lease}}
}

// due reports whether terraform must run: the inputs changed, the last run failed, or
// the drift interval has passed. Otherwise it says when to look again.
func (r *Reconciler) due(mg resource.Managed, hash string) (bool, time.Duration) {
	st := mg.GetManagedStatus()
	if st.Terraform.InputsHash != hash || st.Terraform.LastPlanTime == nil ||
		!meta.IsStatusConditionTrue(st.Conditions, common.TypeSynced) || !resource.IsReady(st.Conditions) {
		return true, 0
	}
	next := st.Terraform.LastPlanTime.Add(r.opts.DriftInterval)
	if wait := time.Until(next); wait > 0 {
		return false, wait + jitter(r.opts.DriftInterval)
	}
	return true, 0
}

// jitter spreads drift checks over a tenth of the interval.
func jitter(d time.Duration) time.Duration {
	return time.Duration(rand.Int64N(int64(d)/10 + 1))
}

// sync plans and applies. A resource never applied is created with one combined
// plan-and-apply; afterwards a plan runs first and apply only when it has changes. A
// resource that adopts existing infrastructure (imports, or state brought in by
// `terraplane migrate`) plans first and applies nothing destructive.
func (r *Reconciler) sync(ctx context.Context, mg resource.Managed, ws *workspace.Rendered) (outcome, error) {
	st := mg.GetManagedStatus()
	inputsChanged := st.Terraform.InputsHash != ws.Hash
	first := st.Terraform.InputsHash == ""
	imports, migrated := len(mg.GetManagedSpec().Imports) > 0, mg.GetAnnotations()[resource.AdoptedAnnotation] == "true"
	// imports: the first plan may create, not destroy; migrated state: it must change nothing.
	res, err := r.opts.Engine.Apply(ctx, ws.Workspace, engine.ApplyOptions{
		PlanFirst:         !first || imports || migrated,
		RefuseDestructive: first && imports,
		RefuseAnyChange:   first && migrated,
		Outputs:           inputsChanged || st.Terraform.LastApplyTime == nil,
	})
	var refused *engine.RefusedPlanError
	if errors.As(err, &refused) {
		return outcome{}, resource.UserErrorf("AdoptionRefused",
			"adopting the existing infrastructure was stopped and nothing was applied: %s; make spec.forProvider match what exists, or fix spec.imports", refused.Error())
	}
	if err != nil {
		return outcome{}, err
	}
	return outcome{ran: true, hash: ws.Hash, changed: res.Changed, outputs: res.Outputs}, nil
}

// publish writes non-sensitive outputs to status.atProvider and connection details to the Secret.
func (r *Reconciler) publish(ctx context.Context, mg resource.Managed, ws *workspace.Rendered, out outcome) error {
	if out.outputs == nil {
		return nil
	}
	atProvider := map[string]any{}
	data := map[string][]byte{}
	keys := r.kind.ConnectionKeys
	if r.kind.ConnectionKeysFor != nil {
		keys = r.kind.ConnectionKeysFor(mg)
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
	for k, v := range ws.Provider.Connection {
		if _, ok := data[k]; !ok && len(v) > 0 {
			data[k] = v
		}
	}
	if err := mg.SetAtProvider(atProvider); err != nil {
		return fmt.Errorf("set atProvider: %w", err)
	}
	return resource.WriteConnectionSecret(ctx, r.client, mg, data)
}

func secretValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return strings.TrimSpace(string(b))
}

// delete destroys the external resource when the policy is Delete, then lets the object go.
func (r *Reconciler) delete(ctx context.Context, mg resource.Managed) error {
	if !controllerutil.ContainsFinalizer(mg, resource.Finalizer) {
		return nil
	}
	if mg.GetManagedSpec().ReclaimPolicy != common.ReclaimRetain {
		if err := r.destroy(ctx, mg); err != nil {
			return err
		}
	}
	if err := r.opts.Engine.Remove(string(mg.GetUID())); err != nil {
		return fmt.Errorf("remove workspace: %w", err)
	}
	return resource.RemoveFinalizer(ctx, r.client, mg)
}

func (r *Reconciler) destroy(ctx context.Context, mg resource.Managed) error {
	st := mg.GetManagedStatus().Terraform
	neverApplied := st.InputsHash == "" && st.LastApplyTime == nil
	if neverApplied && resource.Adopting(mg) {
		return nil // adoption never went through: what exists was never ours to destroy
	}
	ws, err := r.render.Render(ctx, mg)
	if _, user := resource.AsUserError(err); user && neverApplied {
		return nil // nothing was ever applied
	}
	if err != nil {
		return err
	}
	if err := r.clearStaleLock(ctx, mg); err != nil {
		return err
	}
	if err := r.opts.Engine.Destroy(ctx, ws.Workspace); err != nil {
		return err
	}
	objs := stateObjects(mg)
	if ref, ok := resource.ConnectionSecretRef(mg); ok {
		objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace}})
	}
	for _, o := range objs {
		if err := r.client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %s: %w", o.GetName(), err)
		}
	}
	return nil
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
