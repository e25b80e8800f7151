package runner

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/statelock"
)

// Runs is what a runner does for the controller: terraform's verbs for one workspace,
// run by the engine in this process, by the runners of the workspaces' pools, or by a
// stand-in in unit tests.
type Runs interface {
	// Create makes a workspace's resources with one combined plan-and-apply.
	Create(ctx context.Context, ws engine.Workspace) (engine.Result, error)
	// Plan makes and saves a plan.
	Plan(ctx context.Context, ws engine.Workspace, opts engine.PlanOptions) (*engine.Plan, error)
	// ApplyPlan applies a saved plan exactly.
	ApplyPlan(ctx context.Context, ws engine.Workspace, plan *engine.Plan) (engine.Result, error)
	// Outputs reads the outputs.
	Outputs(ctx context.Context, ws engine.Workspace) (map[string]engine.Output, error)
	// Destroy destroys everything in the workspace's state.
	Destroy(ctx context.Context, ws engine.Workspace) error
	// PullState reads the workspace's state.
	PullState(ctx context.Context, ws engine.Workspace) (string, error)
	// ClearStaleLock releases the workspace's state lock when its holder is provably
	// gone, and says how long it had been held and whether it records a create whose
	// outcome is unknown, a record it drops once the resource holds it (recorded); a lock
	// a live run holds is a *statelock.HeldError, one Terraplane did not take a
	// *statelock.StaleLockError.
	ClearStaleLock(ctx context.Context, ws engine.Workspace, recorded bool) (statelock.Released, error)
	// Remove deletes the workspace's directory.
	Remove(ctx context.Context, ws engine.Workspace) error
	// Activity is what terraform is doing now in the workspace: the command running and
	// its resource operations in flight.
	Activity(ctx context.Context, ws engine.Workspace) (engine.Activity, error)
}

var (
	_ Runs = (*Local)(nil)
	_ Runs = (*Client)(nil)
	_ Runs = (*Pools)(nil)
)

// Server serves one pool's runs over HTTP: a request needs the pool's token, and its
// answer streams the terraform commands of the run as they end, then the reply. A
// request whose connection closes interrupts its run.
type Server struct {
	// Runs runs the workspaces: Local, or a stand-in in unit tests.
	Runs Runs
	// Token is what a caller must present as its bearer token.
	Token string
	// Info is what GET /v1/info answers.
	Info Info

	mu      sync.Mutex
	streams map[string]chan engine.Run // the runs of each workspace's request in flight
}

// OnRun passes a finished terraform command to the request of its workspace; give it
// to the engine as engine.Options.OnRun.
func (s *Server) OnRun(r engine.Run) {
	s.mu.Lock()
	ch := s.streams[r.Workspace]
	s.mu.Unlock()
	if ch != nil {
		select {
		case ch <- r:
		default: // a reader that fell behind loses a log line, never the reply
		}
	}
}

// ServeHTTP serves POST /v1/<verb>, and GET /v1/info.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	verb, ok := strings.CutPrefix(r.URL.Path, "/v1/")
	if r.Method == http.MethodGet && verb == pathInfo {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Info)
		return
	}
	if r.Method != http.MethodPost || !ok {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if verb == verbActivity { // asked while the workspace's run is in flight: no stream of its own
		act, err := s.Runs.Activity(r.Context(), req.Workspace)
		w.Header().Set("Content-Type", "application/x-ndjson")
		_ = json.NewEncoder(w).Encode(frame{Reply: &reply{Activity: &act, Error: toWireError(err)}})
		return
	}
	runs := s.follow(req.Workspace.ID)
	defer s.unfollow(req.Workspace.ID)
	done := make(chan reply, 1)
	go func() { done <- s.do(r.Context(), verb, req) }()
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	for {
		select {
		case run := <-runs:
			_ = enc.Encode(frame{Run: toWireRun(run)})
			flush()
		case rep := <-done:
			for len(runs) > 0 {
				_ = enc.Encode(frame{Run: toWireRun(<-runs)})
			}
			_ = enc.Encode(frame{Reply: &rep})
			flush()
			return
		}
	}
}

// authorized checks the bearer token in constant time.
func (s *Server) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && s.Token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) == 1
}

// follow starts collecting the runs of workspace id.
func (s *Server) follow(id string) chan engine.Run {
	ch := make(chan engine.Run, 64)
	s.mu.Lock()
	if s.streams == nil {
		s.streams = map[string]chan engine.Run{}
	}
	s.streams[id] = ch
	s.mu.Unlock()
	return ch
}

func (s *Server) unfollow(id string) {
	s.mu.Lock()
	delete(s.streams, id)
	s.mu.Unlock()
}

// do runs verb for req on the local engine, and says how long it took.
func (s *Server) do(ctx context.Context, verb string, req request) reply {
	var rep reply
	var err error
	ws := req.Workspace
	start := time.Now()
	switch verb {
	case verbCreate:
		var res engine.Result
		res, err = s.Runs.Create(ctx, ws)
		rep.Result = &res
	case verbPlan:
		opts := engine.PlanOptions{}
		if req.Options != nil {
			opts = *req.Options
		}
		rep.Plan, err = s.Runs.Plan(ctx, ws, opts)
	case verbApplyPlan:
		if req.Plan == nil {
			err = fmt.Errorf("apply: no plan")
			break
		}
		var res engine.Result
		res, err = s.Runs.ApplyPlan(ctx, ws, req.Plan)
		rep.Result = &res
	case verbOutputs:
		rep.Outputs, err = s.Runs.Outputs(ctx, ws)
	case verbDestroy:
		err = s.Runs.Destroy(ctx, ws)
	case verbPullState:
		rep.State, err = s.Runs.PullState(ctx, ws)
	case verbClearStale:
		var rel statelock.Released
		rel, err = s.Runs.ClearStaleLock(ctx, ws, req.CreateRecorded)
		rep.Released = &rel
	case verbRemove:
		err = s.Runs.Remove(ctx, ws)
	default:
		err = fmt.Errorf("unknown verb %q", verb)
	}
	rep.Error = toWireError(err)
	rep.Elapsed = time.Since(start)
	return rep
}
