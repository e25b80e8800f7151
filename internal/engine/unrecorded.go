package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// erroredStateFile is where terraform writes the state it could not save to its backend.
const erroredStateFile = "errored.tfstate"

// unrecordedError is a run whose effect terraform may not have recorded in the state:
// it was interrupted, ran out of time, or could not save the state it made.
type unrecordedError struct{ err error }

func (e *unrecordedError) Error() string { return e.err.Error() }
func (e *unrecordedError) Unwrap() error { return e.err }

// OutcomeUnknown reports whether err is a run whose effect may not be in the state: an
// interrupted or timed-out run, or one that could not save its state. A create that ends
// so must be treated as possibly done.
func OutcomeUnknown(err error) bool {
	var u *unrecordedError
	return errors.As(err, &u)
}

// Unrecorded marks err as the error of a run whose effect may not be in the state.
func Unrecorded(err error) error { return &unrecordedError{err} }

// stopped is the error of a command of ws whose context ended, saying why it stopped:
// out of time (naming ws's deadline, its own or the engine's), or interrupted.
func (e *Engine) stopped(ctx context.Context, ws Workspace, verb string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &unrecordedError{fmt.Errorf("terraform %s did not finish within %s: %w", verb, e.timeout(ws), ctx.Err())}
	}
	return &unrecordedError{fmt.Errorf("terraform %s was interrupted: %w", verb, ctx.Err())}
}

// unsaved marks err when the command left a state it could not save in ws's directory.
func (e *Engine) unsaved(ws Workspace, err error) error {
	if _, serr := os.Stat(filepath.Join(e.Dir(ws.ID), erroredStateFile)); serr == nil {
		return &unrecordedError{fmt.Errorf("%w (terraform could not save the state it made; it is kept in the workspace and saved by the next run)", err)}
	}
	return err
}

// pushErroredState saves to the backend a state an earlier command made and could not
// save, before anything else runs: planning without it would make everything it
// recorded again. The file goes only once the backend holds it.
func (e *Engine) pushErroredState(ctx context.Context, ws Workspace, tf *tfexec.Terraform) error {
	path := filepath.Join(e.Dir(ws.ID), erroredStateFile)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	err := e.run(ctx, ws, "state-push", func(ctx context.Context) error {
		return tf.StatePush(ctx, path, runOptions[tfexec.StatePushCmdOption](e, ws)...)
	})
	if err != nil {
		return fmt.Errorf("save the state an earlier run could not save (%s): %w", erroredStateFile, err)
	}
	return os.Remove(path)
}
