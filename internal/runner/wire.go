package runner

import (
	"errors"
	"time"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/statelock"
)

// Verbs a runner serves, one path each under /v1/.
const (
	verbCreate     = "create"
	verbPlan       = "plan"
	verbApplyPlan  = "apply-plan"
	verbOutputs    = "outputs"
	verbDestroy    = "destroy"
	verbPullState  = "pull-state"
	verbClearStale = "clear-stale-lock"
	verbRemove     = "remove"
	verbActivity   = "activity"
	// pathInfo is GET, for Info.
	pathInfo = "info"
)

// request is one run a runner is asked for.
type request struct {
	Workspace engine.Workspace    `json:"workspace"`
	Options   *engine.PlanOptions `json:"options,omitempty"`
	Plan      *engine.Plan        `json:"plan,omitempty"`
	// CreateRecorded, for clear-stale-lock: the resource records the create pending itself.
	CreateRecorded bool `json:"createRecorded,omitempty"`
}

// reply is what a run gave back: one of its results, or an error.
type reply struct {
	Result  *engine.Result           `json:"result,omitempty"`
	Plan    *engine.Plan             `json:"plan,omitempty"`
	Outputs map[string]engine.Output `json:"outputs,omitempty"`
	State   string                   `json:"state,omitempty"`
	// Released is what clear-stale-lock found on the state lock.
	Released *statelock.Released `json:"released,omitempty"`
	// Activity is what the workspace's terraform does now.
	Activity *engine.Activity `json:"activity,omitempty"`
	Error    *wireError       `json:"error,omitempty"`
	// Elapsed is how long the runner spent on the run, from its request decoded to its
	// reply: the rest of the caller's wait is the hop.
	Elapsed time.Duration `json:"elapsed,omitempty"`
}

// Info is what a runner says of itself (GET /v1/info).
type Info struct {
	// MetricsAddress is where it serves its metrics (host:port); empty when it serves none.
	MetricsAddress string `json:"metricsAddress,omitempty"`
}

// frame is one line of a runner's answer: a terraform command that ended, or, last, the
// reply.
type frame struct {
	Run   *wireRun `json:"run,omitempty"`
	Reply *reply   `json:"reply,omitempty"`
}

// wireRun is an engine.Run on the wire.
type wireRun struct {
	Verb      string        `json:"verb"`
	Workspace string        `json:"workspace"`
	Kind      string        `json:"kind"`
	Name      string        `json:"name"`
	Started   time.Time     `json:"started"`
	Duration  time.Duration `json:"duration"`
	Error     string        `json:"error,omitempty"`
}

func toWireRun(r engine.Run) *wireRun {
	w := &wireRun{Verb: r.Verb, Workspace: r.Workspace, Kind: r.Kind, Name: r.Name, Started: r.Started, Duration: r.Duration}
	if r.Err != nil {
		w.Error = r.Err.Error()
	}
	return w
}

func (w *wireRun) run() engine.Run {
	r := engine.Run{Verb: w.Verb, Workspace: w.Workspace, Kind: w.Kind, Name: w.Name, Started: w.Started, Duration: w.Duration}
	if w.Error != "" {
		r.Err = errors.New(w.Error)
	}
	return r
}

// wireError is an error on the wire, with what the Connector tells errors apart by.
type wireError struct {
	Message string `json:"message"`
	// Unrecorded: the run's effect may not be in the state (engine.OutcomeUnknown).
	Unrecorded bool `json:"unrecorded,omitempty"`
	// StalePlan: the saved plan no longer applies (engine.StalePlanError).
	StalePlan bool `json:"stalePlan,omitempty"`
	// Held: a live run of another process holds the state lock (statelock.HeldError).
	Held *statelock.HeldError `json:"held,omitempty"`
	// Foreign: a lock Terraplane did not take holds the state (statelock.StaleLockError).
	Foreign *statelock.LockInfo `json:"foreign,omitempty"`
	// Refused: a create not let through by its check (engine.CreateRefusedError), and why.
	Refused string `json:"refused,omitempty"`
}

// toWireError encodes err; nil for nil.
func toWireError(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Message: err.Error(), Unrecorded: engine.OutcomeUnknown(err)}
	var stale *engine.StalePlanError
	var held *statelock.HeldError
	var foreign *statelock.StaleLockError
	var refused *engine.CreateRefusedError
	switch {
	case errors.As(err, &refused):
		w.Refused = refused.Reason
	case errors.As(err, &stale):
		w.StalePlan = true
	case errors.As(err, &held):
		w.Held = held
	case errors.As(err, &foreign):
		w.Foreign = &foreign.Lock
	}
	return w
}

// err decodes the error, as the engine and the locker made it.
func (w *wireError) err() error {
	switch {
	case w == nil:
		return nil
	case w.StalePlan:
		return &engine.StalePlanError{}
	case w.Held != nil:
		return w.Held
	case w.Foreign != nil:
		return &statelock.StaleLockError{Lock: *w.Foreign}
	case w.Refused != "":
		return &engine.CreateRefusedError{Reason: w.Refused}
	case w.Unrecorded:
		return engine.Unrecorded(errors.New(w.Message))
	}
	return errors.New(w.Message)
}
