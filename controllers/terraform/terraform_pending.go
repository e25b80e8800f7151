package terraform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/statelock"
	"terraplane.io/terraplane/internal/workspace"
)

// nonExistentImport is terraform's summary when an import finds nothing to import.
const nonExistentImport = "Cannot import non-existent remote object"

// missingImportAddress finds, in terraform's "Cannot import non-existent remote object"
// diagnostic, the address whose object does not exist.
// It quotes the address Go-style, so a for_each key's quotes come escaped.
var missingImportAddress = regexp.MustCompile(`import an existing object to ("(?:[^"\\]|\\.)+")`)

// missingImports lists the addresses a run could not import because nothing exists
// there; terraform reports them all at once, in one diagnostic each.
func missingImports(err error) []string {
	if err == nil || !strings.Contains(err.Error(), nonExistentImport) {
		return nil
	}
	var addrs []string
	for _, m := range missingImportAddress.FindAllStringSubmatch(err.Error(), -1) {
		if addr, uerr := strconv.Unquote(m[1]); uerr == nil {
			addrs = append(addrs, strings.TrimPrefix(addr, "module.this."))
		}
	}
	return addrs
}

// settle clears the create-pending record once a run's outcome is known. A run
// interrupted again, out of time, or whose state terraform could not save leaves it, so
// that the next run recovers rather than creates again.
func (r *connector) settle(ctx context.Context, mg resource.Managed, err error) error {
	if ctx.Err() != nil || engine.OutcomeUnknown(err) || !pending(mg) {
		return err
	}
	if cerr := r.setPending(ctx, mg, false); cerr != nil && err == nil {
		return cerr
	}
	return err
}

// creating reports whether the next apply is the resource's first (a create).
func creating(mg resource.Managed) bool {
	st := mg.GetManagedStatus().Terraform
	return st.InputsHash == "" && st.LastApplyTime == nil
}

func pending(mg resource.Managed) bool {
	return mg.GetAnnotations()[common.CreatePendingAnnotation] != ""
}

// markCreating records, before an apply that creates, that a create is in flight.
func (r *connector) markCreating(ctx context.Context, mg resource.Managed) error {
	if !creating(mg) || pending(mg) {
		return nil
	}
	return r.setPending(ctx, mg, true)
}

// recoverCreate decides how an interrupted create carries on: with the partial state
// terraform wrote, by the kind's recovery (imports by a fixed identity, or a converging
// re-run), by the user's spec.imports or create-again annotation, or not at all
// (CreateInterrupted).
func (r *connector) recoverCreate(ctx context.Context, mg resource.Managed, ws *workspace.Rendered) ([]common.ImportInstruction, error) {
	inState, err := r.stateAddresses(ctx, ws)
	if err != nil {
		return nil, err
	}
	if len(mg.GetManagedSpec().Imports) > 0 || mg.GetAnnotations()[common.CreateAgainAnnotation] == "true" {
		return nil, nil
	}
	if r.kind.Terraform.RecoverCreate != nil {
		if imports, ok := r.kind.Terraform.RecoverCreate(mg, ws.Provider); ok {
			// terraform saves its state as each object is made: import only what the
			// interrupted run may have made after that
			imports = slices.DeleteFunc(imports, func(im common.ImportInstruction) bool { return slices.Contains(inState, im.Address) })
			log.FromContext(ctx).Info("recovering an interrupted create", "imports", len(imports), "alreadyInState", len(inState))
			return imports, nil
		}
	}
	if len(inState) > 0 {
		return nil, nil // terraform recorded what it made: a normal run carries on
	}
	if c := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced); c != nil &&
		c.Reason == common.ReasonCreateInterrupted && c.ObservedGeneration == mg.GetGeneration() {
		return nil, resource.UserErrorf(common.ReasonCreateInterrupted, "%s", c.Message) // already said: no plan again
	}
	return nil, r.interrupted(ctx, mg, ws)
}

// interrupted plans (applying nothing) to name what the interrupted create may have
// made, and stops with CreateInterrupted.
func (r *connector) interrupted(ctx context.Context, mg resource.Managed, ws *workspace.Rendered) error {
	key, err := r.plans.Key(ctx, mg.GetNamespace())
	if err != nil {
		return err
	}
	plan, err := r.runner.Plan(ctx, ws.Workspace, engine.PlanOptions{Key: key})
	if err != nil {
		return err
	}
	if len(plan.Changes) == 0 {
		return r.setPending(ctx, mg, false) // nothing to create: nothing can be duplicated
	}
	addrs := make([]string, 0, len(plan.Changes))
	for _, c := range plan.Changes {
		addrs = append(addrs, c.Address)
	}
	return resource.UserErrorf(common.ReasonCreateInterrupted,
		"a create was interrupted before Terraform recorded its result; these may exist already: %s; adopt what exists with spec.imports, or set annotation %s=true to create again",
		strings.Join(addrs, ", "), common.CreateAgainAnnotation)
}

// stateAddresses lists the resource instances in the workspace's state, by their
// address inside the module (module.this. left out), as recovery imports name them.
func (r *connector) stateAddresses(ctx context.Context, ws *workspace.Rendered) ([]string, error) {
	raw, err := r.runner.PullState(ctx, ws.Workspace)
	if err != nil || strings.TrimSpace(raw) == "" {
		return nil, err
	}
	var st struct {
		Resources []struct {
			Module    string `json:"module"`
			Mode      string `json:"mode"`
			Type      string `json:"type"`
			Name      string `json:"name"`
			Instances []struct {
				IndexKey json.RawMessage `json:"index_key"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return nil, fmt.Errorf("read state: %w", err)
	}
	var addrs []string
	for _, res := range st.Resources {
		base := res.Type + "." + res.Name
		if res.Mode == "data" {
			base = "data." + base
		}
		if m := strings.TrimPrefix(res.Module, "module.this"); m != "" {
			base = strings.TrimPrefix(m, ".") + "." + base
		}
		for _, in := range res.Instances {
			if len(in.IndexKey) == 0 {
				addrs = append(addrs, base)
			} else {
				addrs = append(addrs, base+"["+string(in.IndexKey)+"]")
			}
		}
		if len(res.Instances) == 0 {
			addrs = append(addrs, base)
		}
	}
	return addrs, nil
}

// setPending records (on) or clears (off) the create-pending annotation, and with it
// the create-again annotation, which is used once.
func (r *connector) setPending(ctx context.Context, mg resource.Managed, on bool) error {
	orig := mg.DeepCopyObject().(resource.Managed)
	ann := mg.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	if on {
		ann[common.CreatePendingAnnotation] = time.Now().UTC().Format(time.RFC3339)
	} else {
		if ann[common.CreatePendingAnnotation] == "" && ann[common.CreateAgainAnnotation] == "" {
			return nil
		}
		delete(ann, common.CreatePendingAnnotation)
		delete(ann, common.CreateAgainAnnotation)
	}
	mg.SetAnnotations(ann)
	// Recording a create checks the resourceVersion: a reconcile that read a cached copy
	// older than the last apply's status must not create again, but start over.
	patch := client.MergeFrom(orig)
	if on {
		patch = client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})
	}
	if err := r.client.Patch(ctx, mg, patch); err != nil {
		return fmt.Errorf("record create pending: %w", err)
	}
	return nil
}

// releaseStaleLock releases a lock a killed run left on a resource that needs no run now
// (say, a drift plan killed after the resource had settled), so that nothing is left
// locked until the next drift check. A lock another host holds is left alone.
func (r *connector) releaseStaleLock(ctx context.Context, mg resource.Managed) {
	if err := r.clearStaleLock(ctx, mg); err != nil {
		log.FromContext(ctx).V(1).Info("state lock left in place", "reason", err.Error())
		return
	}
	r.locks.free(mg.GetUID(), time.Now())
}

// clearStaleLock releases the resource's state lock when its holder is provably gone,
// and says how long it had been held. A lock a live run of another process holds is
// waited for; one Terraplane did not take is the user's to release.
func (r *connector) clearStaleLock(ctx context.Context, mg resource.Managed) error {
	age, err := r.runner.ClearStaleLock(ctx, workspace.Ref(mg))
	if err != nil {
		return lockError(err)
	}
	if age > 0 {
		log.FromContext(ctx).Info("released a stale state lock", "resource", mg.GetName(), "heldFor", age.Round(time.Millisecond).String(),
			"releasedAt", time.Now().UTC().Format(time.RFC3339Nano))
		r.recorder.Eventf(mg, "Normal", "StateLockReleased", "released a state lock left by an interrupted run (held %s)", age.Round(time.Second))
	}
	return nil
}

// terraformError maps what a run failed with to what the resource shows: a state lock
// held by another run, a fault only a user can fix (access denied, a name taken, a
// value terraform refuses) as a user error retried slowly, or the error itself, retried
// with backoff.
func terraformError(err error) error {
	if err = lockError(err); err == nil {
		return nil
	}
	if _, typed := resource.AsUserError(err); typed {
		return err
	}
	if reason, ok := engine.UserFault(err); ok {
		return resource.UserErrorf(reason, "%s", engine.Summary(err))
	}
	return err
}

// lockError maps a state lock someone else holds to what the resource shows: waiting
// for a live run of another Terraplane process, or StateLocked for a lock only a person
// can release.
func lockError(err error) error {
	var held *statelock.HeldError
	var foreign *statelock.StaleLockError
	switch {
	case errors.As(err, &held):
		return resource.Waitf(common.ReasonStateLocked, "%s", held.Error())
	case errors.As(err, &foreign):
		return resource.UserErrorf(common.ReasonStateLocked, "%s", foreign.Error())
	}
	return err
}
