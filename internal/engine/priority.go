package engine

import "sync"

// First come, first served: terraform processes of the runs that started first get the
// CPU first. Every run the engine prepares takes a ticket when it gets its slot, and each
// terraform process it starts runs at a lower CPU priority (a higher nice value) the more
// runs with an older ticket are still going: nicePerRunAhead for each, up to maxNice. On
// a busy machine the oldest run then finishes about as fast as it would alone instead of
// sharing the cores evenly with every run that started after it, and the runs end in the
// order they began. The total work, and so the time until all are done, stays the same.
//
// A process's priority can be lowered but (without privileges) never raised again, so it
// is set once, when the process starts.
const (
	nicePerRunAhead = 2
	maxNice         = 19
)

// arrivals are the tickets of the runs prepared and not yet done, by workspace.
type arrivals struct {
	mu   sync.Mutex
	next uint64
	live map[string]*ticket
}

// ticket is one workspace's place: the oldest of its runs in flight, and how many are.
type ticket struct {
	number uint64
	runs   int
}

// enter gives the workspace's run a ticket (its runs in flight share the oldest) and
// returns the function that gives it back.
func (a *arrivals) enter(id string) func() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.live == nil {
		a.live = map[string]*ticket{}
	}
	t := a.live[id]
	if t == nil {
		a.next++
		t = &ticket{number: a.next}
		a.live[id] = t
	}
	t.runs++
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if t.runs--; t.runs == 0 {
			delete(a.live, id)
		}
	}
}

// ahead counts the runs in flight with an older ticket than the workspace's; a
// workspace with no run in flight has none ahead.
func (a *arrivals) ahead(id string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	mine := a.live[id]
	if mine == nil {
		return 0
	}
	n := 0
	for _, t := range a.live {
		if t.number < mine.number {
			n++
		}
	}
	return n
}

// nice is the nice value the workspace's next terraform process starts with.
func (a *arrivals) nice(id string) int {
	return min(maxNice, nicePerRunAhead*a.ahead(id))
}
