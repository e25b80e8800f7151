package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
)

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// PlanFirst plans and applies only when the plan has changes; without it Apply runs
	// a combined plan-and-apply, which is cheapest when changes are certain (create).
	PlanFirst bool
	// SkipRefresh plans without refreshing remote objects.
	SkipRefresh bool
	// Outputs reads the outputs even when nothing changed.
	Outputs bool
	// RefuseDestructive (with PlanFirst) applies nothing when the plan would delete or
	// replace anything, and returns a *RefusedPlanError listing what it would do.
	RefuseDestructive bool
	// RefuseAnyChange (with PlanFirst) applies nothing when the plan has any change.
	RefuseAnyChange bool
}

// RefusedPlanError lists the planned actions that made Apply refuse a plan.
type RefusedPlanError struct {
	// Changes are "address: action then action" lines.
	Changes []string
}

// Error lists the planned actions.
func (e *RefusedPlanError) Error() string {
	return "the plan would " + strings.Join(e.Changes, "; ")
}

// Result is what Apply did.
type Result struct {
	// Changed is true when terraform applied changes.
	Changed bool
	// Outputs are the root module outputs, read when something changed or when asked.
	Outputs map[string]Output
}

// Apply makes the workspace's real resources match its configuration.
func (e *Engine) Apply(ctx context.Context, ws Workspace, opts ApplyOptions) (Result, error) {
	tf, done, err := e.prepare(ctx, ws)
	if err != nil {
		return Result{}, err
	}
	defer done()
	res := Result{Changed: true}
	var stream applyStream
	if opts.PlanFirst {
		plan := filepath.Join(e.Dir(ws.ID), planFile)
		defer os.Remove(plan) // a saved plan holds every variable's value, secret ones too
		err = e.run(ctx, ws, func(ctx context.Context) error {
			res.Changed, err = tf.Plan(ctx, tfexec.Out(plan), tfexec.Refresh(!opts.SkipRefresh))
			return err
		})
		if err != nil {
			return Result{}, fmt.Errorf("terraform plan: %w", err)
		}
		if res.Changed && (opts.RefuseDestructive || opts.RefuseAnyChange) {
			if err := e.refuse(ctx, ws, tf, plan, opts.RefuseAnyChange); err != nil {
				return Result{}, err
			}
		}
		if res.Changed {
			stream, err = e.applyJSON(ctx, ws, tf, tfexec.DirOrPlan(plan))
		}
	} else {
		stream, err = e.applyJSON(ctx, ws, tf)
	}
	if err != nil {
		return Result{}, fmt.Errorf("terraform apply: %w", err)
	}
	if res.Changed && stream.complete {
		res.Outputs = stream.outputs // apply reported every output: no `terraform output` needed
	} else if res.Changed || opts.Outputs {
		if res.Outputs, err = e.outputs(ctx, ws, tf); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// applyJSON runs apply with -json and reads its outputs and error diagnostics.
func (e *Engine) applyJSON(ctx context.Context, ws Workspace, tf *tfexec.Terraform, opts ...tfexec.ApplyOption) (applyStream, error) {
	var out bytes.Buffer
	err := e.run(ctx, ws, func(ctx context.Context) error {
		out.Reset()
		err := tf.ApplyJSON(ctx, &out, opts...)
		return parseApplyStream(out.Bytes()).withDiagnostics(err)
	})
	return parseApplyStream(out.Bytes()), err
}

// refuse reads the saved plan and fails if it deletes or replaces anything (or, with
// anyChange, changes anything at all, outputs aside).
func (e *Engine) refuse(ctx context.Context, ws Workspace, tf *tfexec.Terraform, plan string, anyChange bool) error {
	var p *tfjson.Plan
	err := e.run(ctx, ws, func(ctx context.Context) (err error) {
		p, err = tf.ShowPlanFile(ctx, plan)
		return err
	})
	if err != nil {
		return fmt.Errorf("terraform show: %w", err)
	}
	var changes []string
	for _, rc := range p.ResourceChanges {
		if rc.Change == nil || rc.Change.Actions.NoOp() || rc.Change.Actions.Read() {
			continue
		}
		if !anyChange && !rc.Change.Actions.Delete() && !rc.Change.Actions.Replace() {
			continue
		}
		acts := make([]string, 0, len(rc.Change.Actions))
		for _, a := range rc.Change.Actions {
			acts = append(acts, string(a))
		}
		changes = append(changes, rc.Address+": "+strings.Join(acts, " then "))
	}
	if len(changes) > 0 {
		return &RefusedPlanError{Changes: changes}
	}
	return nil
}

// Outputs reads the workspace's root module outputs.
func (e *Engine) Outputs(ctx context.Context, ws Workspace) (map[string]Output, error) {
	tf, done, err := e.prepare(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer done()
	return e.outputs(ctx, ws, tf)
}

func (e *Engine) outputs(ctx context.Context, ws Workspace, tf *tfexec.Terraform) (map[string]Output, error) {
	var meta map[string]tfexec.OutputMeta
	err := e.run(ctx, ws, func(ctx context.Context) (err error) {
		meta, err = tf.Output(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("terraform output: %w", err)
	}
	out := make(map[string]Output, len(meta))
	for name, m := range meta {
		out[name] = Output{Value: m.Value, Sensitive: m.Sensitive}
	}
	return out, nil
}

// Destroy destroys every resource in the workspace's state.
func (e *Engine) Destroy(ctx context.Context, ws Workspace) error {
	tf, done, err := e.prepare(ctx, ws)
	if err != nil {
		return err
	}
	defer done()
	if err := e.run(ctx, ws, func(ctx context.Context) error { return tf.Destroy(ctx) }); err != nil {
		return fmt.Errorf("terraform destroy: %w", err)
	}
	return nil
}

// PushState writes a state file into the workspace's backend (used to take custody of
// state that plain terraform made).
func (e *Engine) PushState(ctx context.Context, ws Workspace, stateFile string) error {
	tf, done, err := e.prepare(ctx, ws)
	if err != nil {
		return err
	}
	defer done()
	if err := e.run(ctx, ws, func(ctx context.Context) error { return tf.StatePush(ctx, stateFile) }); err != nil {
		return fmt.Errorf("terraform state push: %w", err)
	}
	return nil
}

// PullState reads the workspace's state from its backend.
func (e *Engine) PullState(ctx context.Context, ws Workspace) (string, error) {
	tf, done, err := e.prepare(ctx, ws)
	if err != nil {
		return "", err
	}
	defer done()
	var state string
	err = e.run(ctx, ws, func(ctx context.Context) (err error) {
		state, err = tf.StatePull(ctx)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("terraform state pull: %w", err)
	}
	return state, nil
}
