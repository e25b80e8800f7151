package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"terraplane.io/terraplane/internal/plugins"
)

// planWatch reads a combined plan-and-apply's machine-readable UI as terraform writes
// it, for the changes it planned: the plan is complete once terraform summarises it,
// which it does before its first change.
type planWatch struct {
	partial []byte
	planned []plannedChange
	done    chan struct{}
}

// plannedChange is one planned_change line: the instance and its action.
type plannedChange struct {
	address, resourceType, action string
}

func newPlanWatch() *planWatch { return &planWatch{done: make(chan struct{})} }

// Write reads whole lines; terraform's one writer calls it.
func (w *planWatch) Write(b []byte) (int, error) {
	w.partial = append(w.partial, b...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		w.line(w.partial[:i])
		w.partial = w.partial[i+1:]
	}
}

// line reads one line of the UI.
func (w *planWatch) line(l []byte) {
	select {
	case <-w.done:
		return
	default:
	}
	var m uiMessage
	if json.Unmarshal(l, &m) != nil {
		return
	}
	switch {
	case m.Type == "planned_change" && m.Change != nil:
		w.planned = append(w.planned, plannedChange{address: m.Change.Resource.Addr, resourceType: m.Change.Resource.ResourceType, action: m.Change.Action})
	case m.Type == "change_summary" && m.Changes != nil && m.Changes.Operation == "plan":
		close(w.done)
	}
}

// creates waits for the plan's summary, and gives each planned create its instance's
// address: the first of what the provider planned for its type (terraform plans a
// change again just before it applies it). A plan of anything but creates, or of two
// instances of one type (which the provider's plans cannot tell apart), cannot be.
func (w *planWatch) creates(ctx context.Context, got []plugins.PlannedCreate) ([]plugins.PlannedCreate, error) {
	select {
	case <-w.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	first := map[string]plugins.PlannedCreate{}
	for _, c := range got {
		if _, seen := first[c.Type]; !seen {
			first[c.Type] = c
		}
	}
	out := make([]plugins.PlannedCreate, 0, len(w.planned))
	types := map[string]bool{}
	for _, p := range w.planned {
		switch c, ok := first[p.resourceType]; {
		case p.action != "create":
			return nil, fmt.Errorf("the plan does more than create (%s: %s)", p.address, p.action)
		case types[p.resourceType]:
			return nil, fmt.Errorf("the plan creates more than one %s, which a provider's plans do not tell apart", p.resourceType)
		case !ok:
			return nil, fmt.Errorf("no provider planned %s", p.address)
		default:
			types[p.resourceType] = true
			c.Address = p.address
			out = append(out, c)
		}
	}
	return out, nil
}
