package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"terraplane.io/terraplane/internal/plugins"
)

// CreateChecker checks the planned creates of a create against check, its workspace's
// Check, before the first of them reaches a provider: secrets are texts the run read
// that are sensitive. It returns what to report back (Result.Checked) and whether the
// create may go on.
type CreateChecker func(ctx context.Context, check json.RawMessage, creates []plugins.PlannedCreate, secrets []string) (report json.RawMessage, pass bool, err error)

// CreateRefusedError is a create that its check did not let through, or that could not
// be checked inside its apply: nothing was made, and the create is to be planned first.
type CreateRefusedError struct {
	// Reason says why.
	Reason string
}

func (e *CreateRefusedError) Error() string { return "create not checked in its apply: " + e.Reason }

// createCheck is one create's check in progress: the run's providers reached through
// the gate, and its verdict once given.
type createCheck struct {
	// watch reads the UI of the apply running now.
	watch   atomic.Pointer[planWatch]
	release func()

	mu      sync.Mutex // the check runs on a provider call's goroutine
	report  json.RawMessage
	refused *CreateRefusedError
}

// verdict is what the check reported, and its refusal; both nil when it never ran (the
// apply planned nothing, or failed before its first change).
func (c *createCheck) verdict() (json.RawMessage, *CreateRefusedError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.report, c.refused
}

// decide records the check's outcome: what it reported, and a refusal for reason
// (none for ""). A refusal is returned as the error terraform is to show for the held
// change.
func (c *createCheck) decide(report json.RawMessage, reason string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.report = report
	if reason == "" {
		return nil
	}
	c.refused = &CreateRefusedError{Reason: reason}
	return fmt.Errorf("terraplane holds this create to plan it first: %w", c.refused)
}

// ui is what the apply's UI goes to: w, and a new watch of its plan (w alone for no
// check).
func (c *createCheck) ui(w io.Writer) io.Writer {
	if c == nil {
		return w
	}
	watch := newPlanWatch()
	c.watch.Store(watch)
	return io.MultiWriter(w, watch)
}

// holdCreate has ws's run reach its providers through a gate that holds its first
// change until CheckCreate has passed the run's planned creates. A run whose providers
// are not the pool's cannot be held: it is refused before terraform starts.
func (e *Engine) holdCreate(ctx context.Context, ws Workspace) (*createCheck, error) {
	c := &createCheck{}
	check := func(ctx context.Context, planned []plugins.PlannedCreate, secrets []string) error {
		for _, v := range ws.secrets() {
			secrets = append(secrets, v)
		}
		creates, err := c.watch.Load().creates(ctx, planned)
		if err != nil {
			return c.decide(nil, err.Error())
		}
		report, pass, err := e.opts.CheckCreate(ctx, ws.Check, creates, secrets)
		switch {
		case err != nil:
			return c.decide(report, err.Error())
		case !pass:
			return c.decide(report, "its plan did not pass every rule")
		}
		return c.decide(report, "")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	lease := e.lent[ws.ID]
	restore, err := lease.Gate(check)
	if err != nil {
		return nil, &CreateRefusedError{Reason: err.Error()}
	}
	c.release = func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		restore()
	}
	return c, nil
}
