package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// Operation is one resource operation terraform has in flight: creating, updating,
// destroying or reading one resource instance.
type Operation struct {
	// Address is the resource instance's address, e.g. aws_sqs_queue.this.
	Address string `json:"address"`
	// Action is terraform's: create, update, delete, replace, read, ...
	Action string `json:"action"`
	// Since is when terraform started it.
	Since time.Time `json:"since"`
}

// Activity is what a workspace's terraform command is doing now, from its streamed
// machine-readable output.
type Activity struct {
	// Verb is the running command (plan, apply, destroy); empty when none runs.
	Verb string `json:"verb,omitempty"`
	// Since is when the command started.
	Since time.Time `json:"since,omitzero"`
	// Operations are the resource operations in flight, the oldest first.
	Operations []Operation `json:"operations,omitempty"`
}

// Running reports whether a command runs.
func (a Activity) Running() bool { return a.Verb != "" }

// Describe says in one line what the command does at now: the oldest operation in
// flight and for how long, and how many more; "" when no command runs.
func (a Activity) Describe(now time.Time) string {
	if !a.Running() {
		return ""
	}
	if len(a.Operations) == 0 {
		return fmt.Sprintf("terraform %s running for %s", a.Verb, since(a.Since, now))
	}
	op := a.Operations[0]
	s := fmt.Sprintf("terraform is %s %s for %s", progressive(op.Action), op.Address, since(op.Since, now))
	if n := len(a.Operations) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more in flight)", n)
	}
	return s
}

// since rounds the time from t to now to the second.
func since(t, now time.Time) time.Duration { return now.Sub(t).Round(time.Second) }

// progressive words terraform's action as what it is doing: "create" is "creating".
func progressive(action string) string {
	switch action {
	case "create":
		return "creating"
	case "update":
		return "updating"
	case "delete":
		return "destroying"
	case "replace":
		return "replacing"
	case "read":
		return "reading"
	case "noop", "":
		return "working on"
	default:
		return strings.TrimSuffix(action, "e") + "ing"
	}
}

// hookMessage is the part of an apply_start, apply_progress, apply_complete,
// apply_errored, refresh_start or refresh_complete message the tracker reads.
type hookMessage struct {
	Type string `json:"type"`
	Hook *struct {
		Resource struct {
			Addr string `json:"addr"`
		} `json:"resource"`
		Action string `json:"action"`
	} `json:"hook"`
}

// tracker follows one command's streamed -json output, line by line, and keeps its
// operations in flight. It is an io.Writer for terraform's stdout.
type tracker struct {
	mu      sync.Mutex
	verb    string
	started time.Time
	now     func() time.Time
	ops     []Operation
	partial []byte // a line not yet ended
}

func newTracker(verb string, now func() time.Time) *tracker {
	return &tracker{verb: verb, started: now(), now: now}
}

// Write reads the whole lines of p, and keeps the rest for the next write.
func (t *tracker) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.line(t.partial[:i])
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > 1<<20 {
		t.partial = nil // not a line the tracker reads (a huge outputs message): skip it
	}
	return len(p), nil
}

// line records one message.
func (t *tracker) line(b []byte) {
	if !bytes.Contains(b, []byte(`"hook"`)) {
		return
	}
	var m hookMessage
	if json.Unmarshal(b, &m) != nil || m.Hook == nil || m.Hook.Resource.Addr == "" {
		return
	}
	addr := m.Hook.Resource.Addr
	at := slices.IndexFunc(t.ops, func(o Operation) bool { return o.Address == addr })
	switch m.Type {
	case "apply_start", "refresh_start":
		action := m.Hook.Action
		if m.Type == "refresh_start" {
			action = "read"
		}
		if at < 0 {
			t.ops = append(t.ops, Operation{Address: addr, Action: action, Since: t.now()})
		}
	case "apply_complete", "apply_errored", "refresh_complete":
		if at >= 0 {
			t.ops = slices.Delete(t.ops, at, at+1)
		}
	}
}

// activity is a copy of what the command does now.
func (t *tracker) activity() Activity {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Activity{Verb: t.verb, Since: t.started, Operations: slices.Clone(t.ops)}
}

// activities are the trackers of the commands running, by workspace.
type activities struct {
	mu sync.Mutex
	by map[string]*tracker
}

// start tracks workspace id's command verb until the returned func is called.
func (a *activities) start(id, verb string) (*tracker, func()) {
	t := newTracker(verb, time.Now)
	a.mu.Lock()
	if a.by == nil {
		a.by = map[string]*tracker{}
	}
	a.by[id] = t
	a.mu.Unlock()
	return t, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.by[id] == t {
			delete(a.by, id)
		}
	}
}

// writer is where the command running for workspace id streams its -json output, so
// that its activity follows it; io.Discard when none is tracked.
func (a *activities) writer(id string) io.Writer {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t := a.by[id]; t != nil {
		return t
	}
	return io.Discard
}

// of is what workspace id's command does now; the zero Activity when none runs.
func (a *activities) of(id string) Activity {
	a.mu.Lock()
	t := a.by[id]
	a.mu.Unlock()
	if t == nil {
		return Activity{}
	}
	return t.activity()
}

// Activity is what terraform is doing now in workspace id: the command running (init,
// plan, apply, ...) and, for those that stream their progress (plan, apply, destroy),
// its resource operations in flight.
func (e *Engine) Activity(id string) Activity { return e.activity.of(id) }
