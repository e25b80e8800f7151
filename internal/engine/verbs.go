package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// Result is what an apply did.
type Result struct {
	// Changes are the resource changes applied.
	Changes []Change
	// Outputs are the root module outputs after the apply.
	Outputs map[string]Output
	// Resources is the number of resource instances in state after the apply; -1 when
	// unknown.
	Resources int
	// Lock is the dependency lock the apply ran with.
	Lock []byte
	// Checked is what the create's check reported (Workspace.Check); nil without one.
	Checked json.RawMessage `json:",omitempty"`
}

// Create makes the workspace's resources with one combined plan-and-apply: the cheapest
// way when the state is empty and every change is a create.
func (e *Engine) Create(ctx context.Context, ws Workspace) (Result, error) {
	return describingAll(e, ws, func() (Result, error) { return e.create(ctx, ws) })
}

func (e *Engine) create(ctx context.Context, ws Workspace) (Result, error) {
	if ws.Check != nil && e.opts.CheckCreate == nil {
		return Result{}, &CreateRefusedError{Reason: "this engine checks no create in its apply"}
	}
	tf, done, err := e.prepareWithProviders(ctx, ws)
	if err != nil {
		return Result{}, err
	}
	defer done()
	var check *createCheck
	if ws.Check != nil {
		if check, err = e.holdCreate(ctx, ws); err != nil {
			return Result{}, err
		}
		defer check.release()
	}
	stream, err := e.applyJSON(ctx, ws, tf, check)
	var checked json.RawMessage
	if check != nil {
		var refused *CreateRefusedError
		if checked, refused = check.verdict(); refused != nil {
			return Result{}, refused // terraform's error is the refusal's consequence
		}
	}
	if err != nil {
		return Result{}, fmt.Errorf("terraform apply: %w", err)
	}
	res := Result{Changes: stream.changes, Resources: -1, Lock: readLock(e.Dir(ws.ID)), Checked: checked}
	if stream.summary != nil {
		res.Resources = stream.summary.Add + stream.summary.Import - stream.summary.Remove
	}
	if res.Outputs = stream.outputs; !stream.complete {
		if res.Outputs, err = e.outputs(ctx, ws, tf); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// applyJSON runs apply with -json and reads its changes, outputs and error diagnostics;
// check, when set, watches its plan.
func (e *Engine) applyJSON(ctx context.Context, ws Workspace, tf *tfexec.Terraform, check *createCheck, opts ...tfexec.ApplyOption) (uiStream, error) {
	return e.runJSON(ctx, ws, "apply", func(ctx context.Context, w io.Writer) error {
		return tf.ApplyJSON(ctx, check.ui(w), runOptions(e, ws, opts...)...)
	})
}

// runJSON runs a verb whose machine-readable UI (-json) cmd writes to w, and reads what
// it reported. Its error carries terraform's error diagnostics from that UI (a
// precondition's error_message among them), so that a summary never depends on the
// banner terraform prints for people.
func (e *Engine) runJSON(ctx context.Context, ws Workspace, verb string, cmd func(ctx context.Context, w io.Writer) error) (uiStream, error) {
	var out bytes.Buffer
	err := e.run(ctx, ws, verb, func(ctx context.Context) error {
		out.Reset()
		err := cmd(ctx, io.MultiWriter(&out, e.activity.writer(ws.ID)))
		return parseUIStream(out.Bytes()).withDiagnostics(err)
	})
	return parseUIStream(out.Bytes()), err
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
	err := e.run(ctx, ws, "output", func(ctx context.Context) (err error) {
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
	_, err := describingAll(e, ws, func() (struct{}, error) { return struct{}{}, e.destroy(ctx, ws) })
	return err
}

func (e *Engine) destroy(ctx context.Context, ws Workspace) error {
	tf, done, err := e.prepareWithProviders(ctx, ws)
	if err != nil {
		return err
	}
	defer done()
	_, err = e.runJSON(ctx, ws, "destroy", func(ctx context.Context, w io.Writer) error {
		return tf.DestroyJSON(ctx, w, runOptions[tfexec.DestroyOption](e, ws)...)
	})
	if err != nil {
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
	if err := e.run(ctx, ws, "state-push", func(ctx context.Context) error {
		return tf.StatePush(ctx, stateFile, runOptions[tfexec.StatePushCmdOption](e, ws)...)
	}); err != nil {
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
	err = e.run(ctx, ws, "state-pull", func(ctx context.Context) (err error) {
		state, err = tf.StatePull(ctx)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("terraform state pull: %w", err)
	}
	return state, nil
}

// StalePlanError says a saved plan no longer applies: the state changed since it was made.
type StalePlanError struct{ cause error }

// Error says the plan is stale.
func (e *StalePlanError) Error() string {
	return "the saved plan is stale: the state changed since it was made"
}

// Unwrap returns terraform's error.
func (e *StalePlanError) Unwrap() error { return e.cause }

// ApplyPlan applies a saved plan exactly: it fails with a *StalePlanError when the state
// changed since the plan was made.
func (e *Engine) ApplyPlan(ctx context.Context, ws Workspace, plan *Plan) (Result, error) {
	if plan.Lock != nil {
		ws.Lock = plan.Lock // terraform applies a plan only with the providers it was made with
	}
	return describingAll(e, ws, func() (Result, error) { return e.applyPlan(ctx, ws, plan) })
}

func (e *Engine) applyPlan(ctx context.Context, ws Workspace, plan *Plan) (Result, error) {
	tf, done, err := e.prepareWithProviders(ctx, ws)
	if err != nil {
		return Result{}, err
	}
	defer done()
	path := filepath.Join(e.Dir(ws.ID), planFile)
	if err := os.WriteFile(path, plan.File, 0o600); err != nil {
		return Result{}, fmt.Errorf("write saved plan: %w", err)
	}
	defer os.Remove(path)
	stream, err := e.applyJSON(ctx, ws, tf, nil, tfexec.DirOrPlan(path))
	if err != nil {
		if isStale(err) {
			return Result{}, &StalePlanError{cause: err}
		}
		return Result{}, fmt.Errorf("terraform apply: %w", err)
	}
	res := Result{Changes: plan.Changes, Resources: plan.Resources, Lock: readLock(e.Dir(ws.ID))}
	if res.Outputs = stream.outputs; !stream.complete {
		if res.Outputs, err = e.outputs(ctx, ws, tf); err != nil {
			return Result{}, err
		}
	}
	return res, nil
}

// isStale reports whether terraform refused a saved plan because the state moved on.
func isStale(err error) bool { return strings.Contains(err.Error(), "Saved plan is stale") }
