package runner

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/holder"
	"terraplane.io/terraplane/internal/statelock"
)

// fakeRuns answers each verb as told, reports one terraform command per call, and
// remembers the workspaces and whether a run was interrupted.
type fakeRuns struct {
	srv         *Server
	err         error
	mu          sync.Mutex
	seen        []engine.Workspace
	interrupted bool
	block       bool
	delay       time.Duration // each run takes this long
	activity    engine.Activity
}

func (f *fakeRuns) record(ctx context.Context, ws engine.Workspace, verb string) error {
	f.mu.Lock()
	f.seen = append(f.seen, ws)
	f.mu.Unlock()
	f.srv.OnRun(engine.Run{Verb: verb, Workspace: ws.ID, Kind: ws.Kind, Name: ws.Name, Duration: time.Second})
	time.Sleep(f.delay)
	if f.block {
		<-ctx.Done()
		f.mu.Lock()
		f.interrupted = true
		f.mu.Unlock()
		return engine.Unrecorded(ctx.Err())
	}
	return f.err
}

func (f *fakeRuns) Create(ctx context.Context, ws engine.Workspace) (engine.Result, error) {
	return engine.Result{Resources: 2, Outputs: map[string]engine.Output{"id": {Value: []byte(`"x"`), Sensitive: true}}}, f.record(ctx, ws, "apply")
}
func (f *fakeRuns) Plan(ctx context.Context, ws engine.Workspace, opts engine.PlanOptions) (*engine.Plan, error) {
	return &engine.Plan{ID: "p1", File: []byte("saved"), Text: "plan text", Resources: 1, PriorResources: 0,
		Changes: []engine.Change{{Address: "a", Actions: []string{"create"}}}}, f.record(ctx, ws, "plan")
}
func (f *fakeRuns) ApplyPlan(ctx context.Context, ws engine.Workspace, plan *engine.Plan) (engine.Result, error) {
	return engine.Result{Changes: plan.Changes}, f.record(ctx, ws, "apply")
}
func (f *fakeRuns) Outputs(ctx context.Context, ws engine.Workspace) (map[string]engine.Output, error) {
	return map[string]engine.Output{"o": {Value: []byte("1")}}, f.record(ctx, ws, "output")
}
func (f *fakeRuns) Destroy(ctx context.Context, ws engine.Workspace) error {
	return f.record(ctx, ws, "destroy")
}
func (f *fakeRuns) PullState(ctx context.Context, ws engine.Workspace) (string, error) {
	return `{"version":4}`, f.record(ctx, ws, "state-pull")
}
func (f *fakeRuns) ClearStaleLock(ctx context.Context, ws engine.Workspace, recorded bool) (statelock.Released, error) {
	return statelock.Released{Age: time.Minute, CreatePending: !recorded}, f.record(ctx, ws, "")
}
func (f *fakeRuns) Remove(ctx context.Context, ws engine.Workspace) error {
	return f.record(ctx, ws, "")
}
func (f *fakeRuns) Activity(context.Context, engine.Workspace) (engine.Activity, error) {
	return f.activity, nil
}

// serve starts a Server over runs on a unix socket and returns a client of it, with the
// runs it reports collected.
func serve(t *testing.T, runs *fakeRuns, token string) (*Client, *[]engine.Run) {
	t.Helper()
	srv := &Server{Runs: runs, Token: "the-token", Info: Info{MetricsAddress: "127.0.0.1:9100"}}
	runs.srv = srv
	socket := filepath.Join(t.TempDir(), "runner.sock")
	lis, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv}
	go func() { _ = hs.Serve(lis) }()
	t.Cleanup(func() { _ = hs.Close() })
	var mu sync.Mutex
	var reported []engine.Run
	c := NewClient(socket, token, func(r engine.Run) { mu.Lock(); reported = append(reported, r); mu.Unlock() })
	return c, &reported
}

// TestRoundTrip: every verb reaches the runner with the workspace (secrets and the
// resource's own command deadline included), comes back with its result, and the
// runner's terraform commands reach the caller.
func TestRoundTrip(t *testing.T) {
	runs := &fakeRuns{}
	c, reported := serve(t, runs, "the-token")
	ctx := context.Background()
	ws := engine.Workspace{ID: "u1", Kind: "Module", Name: "ns/m", Files: map[string][]byte{"main.tf": []byte("x")},
		Env: map[string]string{"AWS_SECRET_ACCESS_KEY": "s3cr3t"}, SecretVars: map[string]any{"password": "pw"},
		BackendConfig: map[string]string{"namespace": "ns", "secret_suffix": "u1"}, Pool: "gold", Timeout: 45 * time.Minute, Creates: true}
	res, err := c.Create(ctx, ws)
	if err != nil || res.Resources != 2 || !res.Outputs["id"].Sensitive || string(res.Outputs["id"].Value) != `"x"` {
		t.Fatalf("create: %+v, %v", res, err)
	}
	plan, err := c.Plan(ctx, ws, engine.PlanOptions{Key: []byte("k")})
	if err != nil || plan.ID != "p1" || string(plan.File) != "saved" || plan.Text != "plan text" {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	if res, err := c.ApplyPlan(ctx, ws, plan); err != nil || len(res.Changes) != 1 {
		t.Fatalf("apply: %+v, %v", res, err)
	}
	if out, err := c.Outputs(ctx, ws); err != nil || string(out["o"].Value) != "1" {
		t.Fatalf("outputs: %v, %v", out, err)
	}
	if state, err := c.PullState(ctx, ws); err != nil || state != `{"version":4}` {
		t.Fatalf("state: %q, %v", state, err)
	}
	if rel, err := c.ClearStaleLock(ctx, ws, false); err != nil || rel != (statelock.Released{Age: time.Minute, CreatePending: true}) {
		t.Fatalf("clear stale lock: %+v, %v", rel, err)
	}
	if rel, err := c.ClearStaleLock(ctx, ws, true); err != nil || rel.CreatePending {
		t.Fatalf("clear stale lock, the create recorded by the resource: %+v, %v", rel, err)
	}
	if err := c.Destroy(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ws, runs.seen[0]); diff != "" {
		t.Errorf("workspace the runner got (-sent +got):\n%s", diff)
	}
	var verbs []string
	for _, r := range *reported {
		verbs = append(verbs, r.Verb)
	}
	if got := strings.Join(verbs, " "); !strings.HasPrefix(got, "apply plan apply output state-pull") {
		t.Errorf("reported runs %q", got)
	}
}

// TestErrorsKeepTheirKind: what the Connector tells errors apart by survives the hop.
func TestErrorsKeepTheirKind(t *testing.T) {
	lock := statelock.LockInfo{ID: "l", Who: "terraplane x", Operation: "apply", Created: time.Now().UTC().Truncate(time.Second)}
	for _, tc := range []struct {
		name  string
		err   error
		check func(error) bool
	}{
		{"a stale plan", &engine.StalePlanError{}, func(err error) bool { var s *engine.StalePlanError; return errors.As(err, &s) }},
		{"an unrecorded outcome", engine.Unrecorded(errors.New("interrupted")), engine.OutcomeUnknown},
		{"a held lock", &statelock.HeldError{Lock: lock, Holder: holder.Holder{ID: "h", PID: 7}}, func(err error) bool {
			var h *statelock.HeldError
			return errors.As(err, &h) && h.Holder.PID == 7 && h.Lock.ID == "l"
		}},
		{"a foreign lock", &statelock.StaleLockError{Lock: lock}, func(err error) bool {
			var f *statelock.StaleLockError
			return errors.As(err, &f) && f.Lock.Who == "terraplane x"
		}},
		{"a plain failure keeps its text", errors.New("Error: api error AccessDenied: no"), func(err error) bool {
			return err.Error() == "Error: api error AccessDenied: no" && !engine.OutcomeUnknown(err)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := serve(t, &fakeRuns{err: tc.err}, "the-token")
			_, err := c.Plan(context.Background(), engine.Workspace{ID: "w"}, engine.PlanOptions{})
			if err == nil || !tc.check(err) {
				t.Errorf("error after the hop: %#v", err)
			}
		})
	}
}

// TestWrongTokenIsRefused: a caller without the pool's token runs nothing.
func TestWrongTokenIsRefused(t *testing.T) {
	runs := &fakeRuns{}
	for _, token := range []string{"", "another-token"} {
		c, _ := serve(t, runs, token)
		if _, err := c.Create(context.Background(), engine.Workspace{ID: "w"}); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("token %q: err %v, want the runner to refuse it", token, err)
		}
	}
	if len(runs.seen) != 0 {
		t.Errorf("the runner ran %d runs for callers without the token", len(runs.seen))
	}
}

// TestCallerGoneInterruptsTheRun: when the controller's reconcile ends, the runner's
// run is interrupted, and the caller sees an outcome that may not be recorded.
func TestCallerGoneInterruptsTheRun(t *testing.T) {
	runs := &fakeRuns{block: true}
	c, _ := serve(t, runs, "the-token")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := c.Create(ctx, engine.Workspace{ID: "w"})
	if !engine.OutcomeUnknown(err) {
		t.Fatalf("err %v, want an unrecorded outcome", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runs.mu.Lock()
		done := runs.interrupted
		runs.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the runner's run went on after its caller left")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestActivityBesideARun: asked while the workspace's run is in flight, the runner says
// what terraform does, and the run's own answer (its terraform commands, its reply)
// still reaches its caller.
func TestActivityBesideARun(t *testing.T) {
	since := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	runs := &fakeRuns{delay: 500 * time.Millisecond, activity: engine.Activity{Verb: "apply", Since: since,
		Operations: []engine.Operation{{Address: "aws_sqs_queue.q", Action: "create", Since: since}}}}
	c, reported := serve(t, runs, "the-token")
	ctx := context.Background()
	ws := engine.Workspace{ID: "w", Kind: "Module", Name: "ns/m"}
	done := make(chan error, 1)
	go func() { _, err := c.Create(ctx, ws); done <- err }()
	time.Sleep(100 * time.Millisecond)
	got, err := c.Activity(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, runs.activity) {
		t.Errorf("activity %+v, want %+v", got, runs.activity)
	}
	if err := <-done; err != nil {
		t.Fatalf("the run beside the activity call: %v", err)
	}
	if len(*reported) != 1 || (*reported)[0].Verb != "apply" {
		t.Errorf("the run's terraform commands reached the caller as %+v, want its one apply", *reported)
	}
}

// TestPoolOf: a workspace runs in its Pool of its state's namespace, or the default.
func TestPoolOf(t *testing.T) {
	for _, tc := range []struct {
		ws   engine.Workspace
		want PoolRef
	}{
		{engine.Workspace{BackendConfig: map[string]string{"namespace": "team-a"}}, PoolRef{"team-a", DefaultPool}},
		{engine.Workspace{BackendConfig: map[string]string{"namespace": "team-a"}, Pool: "gold"}, PoolRef{"team-a", "gold"}},
	} {
		if got := PoolOf(tc.ws); got != tc.want {
			t.Errorf("PoolOf(%+v) = %v, want %v", tc.ws, got, tc.want)
		}
	}
}

// fakeLauncher hands out one client per pool, counting launches and forgets.
type fakeLauncher struct {
	clients  map[PoolRef]*Client
	launched []PoolRef
	forgot   []PoolRef
}

func (f *fakeLauncher) Launch(_ context.Context, pool PoolRef) (*Client, error) {
	f.launched = append(f.launched, pool)
	if c := f.clients[pool]; c != nil {
		return c, nil
	}
	return nil, errors.New("no runner")
}
func (f *fakeLauncher) Running(pool PoolRef) *Client { return f.clients[pool] }
func (f *fakeLauncher) Forget(pool PoolRef)          { f.forgot = append(f.forgot, pool) }
func (f *fakeLauncher) Stop()                        {}

// TestPoolsSendEachRunToItsPool: a run goes to the runner of its workspace's pool; a
// runner that does not answer is forgotten, so the next run starts another; a runner's
// own failure is not.
func TestPoolsSendEachRunToItsPool(t *testing.T) {
	gold, _ := serve(t, &fakeRuns{}, "the-token")
	failing, _ := serve(t, &fakeRuns{err: errors.New("Error: boom")}, "the-token")
	gone := NewClient(filepath.Join(t.TempDir(), "nothing.sock"), "the-token", nil)
	l := &fakeLauncher{clients: map[PoolRef]*Client{{"a", "gold"}: gold, {"a", DefaultPool}: failing, {"b", DefaultPool}: gone}}
	p := &Pools{Launcher: l}
	ws := func(ns, pool string) engine.Workspace {
		return engine.Workspace{ID: ns + pool, BackendConfig: map[string]string{"namespace": ns}, Pool: pool}
	}
	ctx := context.Background()
	if _, err := p.Create(ctx, ws("a", "gold")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create(ctx, ws("a", "")); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("the default pool's failure: %v", err)
	}
	if _, err := p.Create(ctx, ws("b", "")); err == nil || engine.OutcomeUnknown(err) {
		t.Errorf("a runner that cannot be reached: %v, want an error, the run never having started", err)
	}
	if _, err := p.Create(ctx, ws("c", "")); err == nil || !strings.Contains(err.Error(), "runner pool c/default") {
		t.Errorf("a pool that cannot start: %v", err)
	}
	if _, err := p.Plan(ctx, engine.Workspace{ID: "x"}, engine.PlanOptions{}); err == nil {
		t.Error("a workspace with no namespace has no pool")
	}
	if diff := cmp.Diff([]PoolRef{{"a", "gold"}, {"a", DefaultPool}, {"b", DefaultPool}, {"c", DefaultPool}}, l.launched); diff != "" {
		t.Errorf("launched (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]PoolRef{{"b", DefaultPool}}, l.forgot); diff != "" {
		t.Errorf("forgotten (-want +got):\n%s", diff)
	}
}

// TestServerRefusesWhatIsNoRun: wrong methods, paths, bodies and verbs are refused
// without running anything.
func TestServerRefusesWhatIsNoRun(t *testing.T) {
	runs := &fakeRuns{}
	srv := &Server{Runs: runs, Token: "t"}
	runs.srv = srv
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		reply                    string
	}{
		{"GET", http.MethodGet, "/v1/create", "{}", http.StatusNotFound, ""},
		{"another path", http.MethodPost, "/v2/create", "{}", http.StatusNotFound, ""},
		{"not JSON", http.MethodPost, "/v1/create", "{", http.StatusBadRequest, ""},
		{"an unknown verb", http.MethodPost, "/v1/format-disk", `{"workspace":{"ID":"w"}}`, http.StatusOK, `unknown verb`},
		{"apply without a plan", http.MethodPost, "/v1/apply-plan", `{"workspace":{"ID":"w"}}`, http.StatusOK, `no plan`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer t")
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.reply) {
				t.Errorf("%d %q, want %d with %q", rec.Code, rec.Body.String(), tc.code, tc.reply)
			}
		})
	}
	if len(runs.seen) != 0 {
		t.Errorf("ran %d runs", len(runs.seen))
	}
}

// TestWireRuns: a terraform command crosses the wire with its error as text.
func TestWireRuns(t *testing.T) {
	r := engine.Run{Verb: "apply", Workspace: "w", Kind: "Module", Name: "ns/m", Started: time.Unix(100, 0).UTC(), Duration: time.Second, Err: errors.New("boom")}
	got := toWireRun(r).run()
	if got.Verb != r.Verb || got.Workspace != r.Workspace || !got.Started.Equal(r.Started) || got.Duration != r.Duration || got.Err == nil || got.Err.Error() != "boom" {
		t.Errorf("run after the wire: %+v", got)
	}
	if toWireRun(engine.Run{Verb: "plan"}).run().Err != nil {
		t.Error("a run without an error gains one")
	}
	if toWireError(nil) != nil || (*wireError)(nil).err() != nil {
		t.Error("no error must stay no error")
	}
}
