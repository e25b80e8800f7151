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

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// recoverInterruptedCreate decides, for a resource whose last create was interrupted,
// how it carries on: with what terraform recorded, with recovery imports, or not at all
// (CreateInterrupted).
func (e *run) recoverInterruptedCreate(ctx context.Context) (next, error) {
	if !e.sit.pending {
		e.recovered = true
		return proceed, nil
	}
	imports, err := e.recoverCreate(ctx)
	if err != nil {
		return proceed, err // still interrupted: the record stays for the user's answer
	}
	e.imports = imports
	if err := e.renderImports(ctx); err != nil {
		return proceed, err
	}
	e.recovered = true
	return proceed, nil
}

// markCreating makes the apply of a resource's first create record the create on its
// state lock while it runs (engine.Workspace.Creates), in the write that takes the lock:
// a create cut off leaves the record there for the next run (takeOverCreate). It checks
// first that the resource as stored now records no create or apply the run has not
// read: a reconcile that read a cached copy older than the last apply's status must not
// create again, but start over.
func (e *run) markCreating(ctx context.Context) (next, error) {
	if !e.sit.creating || e.sit.pending {
		return proceed, nil
	}
	latest := e.mg.DeepCopyObject().(resource.Managed)
	if err := e.t.reader.Get(ctx, client.ObjectKeyFromObject(e.mg), latest); err != nil {
		return proceed, fmt.Errorf("read the resource before its create: %w", err)
	}
	if !noCreateSince(e.mg, latest) {
		gvk := e.mg.GetObjectKind().GroupVersionKind()
		return proceed, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, e.mg.GetName(),
			errors.New("it changed since this run read it, and may record a create: the run starts over"))
	}
	e.creates = true
	return proceed, nil
}

// settle settles the create-pending record once a run's outcome is known: a record on
// the resource goes. A first create interrupted, out of time, or whose state terraform
// could not save left its record on the state lock: it moves onto the resource now, so
// that the next run recovers rather than creates again (a run whose context has ended
// leaves that to the next run).
func (e *run) settle(ctx context.Context, err error) error {
	unknown := ctx.Err() != nil || engine.OutcomeUnknown(err)
	switch {
	case unknown && e.creates && ctx.Err() == nil:
		return errors.Join(err, e.takeOverCreate(ctx))
	case unknown || !e.sit.pending:
		return err
	}
	if cerr := e.setPending(ctx, false); cerr != nil && err == nil {
		return cerr
	}
	return err
}

// takeOverCreate moves the record of a create whose outcome is unknown from the state
// lock onto the resource (the create-pending annotation), where recovery reads it, and
// then drops it from the lock. In that order, a run cut off between the two leaves the
// record in both places, never in neither.
func (e *run) takeOverCreate(ctx context.Context) error {
	if err := e.setPending(ctx, true); err != nil {
		return err
	}
	if _, err := e.t.runner.ClearStaleLock(ctx, workspace.Ref(e.mg), true); err != nil {
		return lockError(err)
	}
	log.FromContext(ctx).Info("a create was interrupted before its outcome was known; the resource records it", "resource", e.mg.GetName())
	return nil
}

// recoverCreate decides how an interrupted create carries on: with the partial state
// terraform wrote, by the kind's recovery (imports by a fixed identity, or a converging
// re-run), by the user's spec.imports or create-again annotation, or not at all
// (CreateInterrupted).
func (e *run) recoverCreate(ctx context.Context) ([]common.ImportInstruction, error) {
	mg, ws := e.mg, e.rendered
	inState, err := e.stateAddresses(ctx, ws)
	if err != nil {
		return nil, err
	}
	if len(mg.GetManagedSpec().Imports) > 0 || mg.GetAnnotations()[common.CreateAgainAnnotation] == "true" {
		return nil, nil
	}
	if e.t.kind.Terraform.RecoverCreate != nil {
		if imports, ok := e.t.kind.Terraform.RecoverCreate(mg, ws.Provider); ok {
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
	return nil, e.interrupted(ctx)
}

// interrupted plans (applying nothing) to name what the interrupted create may have
// made, and stops with CreateInterrupted.
func (e *run) interrupted(ctx context.Context) error {
	mg, ws := e.mg, e.rendered
	key, err := e.t.plans.Key(ctx, mg.GetNamespace())
	if err != nil {
		return err
	}
	plan, err := e.t.runner.Plan(ctx, ws.Workspace, engine.PlanOptions{Key: key})
	if err != nil {
		return err
	}
	if len(plan.Changes) == 0 {
		return e.setPending(ctx, false) // nothing to create: nothing can be duplicated
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
func (e *run) stateAddresses(ctx context.Context, ws *workspace.Rendered) ([]string, error) {
	raw, err := e.t.runner.PullState(ctx, ws.Workspace)
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

// setPending records (on) or clears (off) the create-pending annotation on the resource,
// and with it the create-again annotation, which is used once; the situation follows.
func (e *run) setPending(ctx context.Context, on bool) error {
	mg := e.mg
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
	if err := e.t.client.Patch(ctx, mg, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("record create pending: %w", err)
	}
	e.sit.pending = on
	return nil
}

// noCreateSince reports whether latest, the resource as stored now, is the one the run
// read (read) but for changes that record no create: the same generation, no create
// pending, and the same record of applies. What else changed (the run's own progress
// written into the status while terraform planned, another controller's labels) lets a
// create go on.
func noCreateSince(read, latest resource.Managed) bool {
	was, is := read.GetManagedStatus().Terraform, latest.GetManagedStatus().Terraform
	return latest.GetGeneration() == read.GetGeneration() &&
		latest.GetAnnotations()[common.CreatePendingAnnotation] == "" &&
		equality.Semantic.DeepEqual(was.LastApplyTime, is.LastApplyTime) &&
		equality.Semantic.DeepEqual(was.LastApply, is.LastApply) &&
		was.Resources == is.Resources && was.InputsHash == is.InputsHash
}

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

// withoutMissingImports handles a failure that names recovery imports whose objects do
// not exist (the interrupted create made some objects and not others): it adopts those
// that exist and creates the rest, planning again without the missing ones.
func (e *run) withoutMissingImports(ctx context.Context, err error) (next, error) {
	missing := missingImports(err)
	if len(missing) == 0 || len(e.imports) == 0 {
		return proceed, err
	}
	e.imports = slices.DeleteFunc(e.imports, func(im common.ImportInstruction) bool { return slices.Contains(missing, im.Address) })
	if rerr := e.renderImports(ctx); rerr != nil {
		return proceed, rerr
	}
	return replan, nil
}

// renderImports renders the workspace again with the recovery imports added.
func (e *run) renderImports(ctx context.Context) error {
	if len(e.imports) == 0 {
		e.ws = e.rendered
		return nil
	}
	cp := e.mg.DeepCopyObject().(resource.Managed)
	spec := cp.GetManagedSpec()
	spec.Imports = append(spec.Imports, e.imports...)
	ws, err := e.t.render.Render(ctx, cp)
	if err != nil {
		return err
	}
	e.ws = ws
	return nil
}
