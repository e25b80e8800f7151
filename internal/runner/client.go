package runner

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/statelock"
)

// Client runs workspaces on one runner, through its socket or over TLS.
type Client struct {
	http  *http.Client
	base  string // the runner's URL
	token string
	// OnRun, when set, is told about every terraform command the runner reports.
	OnRun func(engine.Run)
	// OnCall, when set, is told about every run sent to the runner, once it ends.
	OnCall func(Call)

	// busy counts the runs in flight; last is when one last began or ended, or the
	// client was last handed out (unix nanoseconds): what says a runner is idle.
	busy, last atomic.Int64
}

// touch records activity: delta runs begin (1), end (-1), or none (0), now.
func (c *Client) touch(delta int64) {
	c.busy.Add(delta)
	c.last.Store(time.Now().UnixNano())
}

// idle reports whether no run is in flight and nothing happened for ttl before now.
func (c *Client) idle(now time.Time, ttl time.Duration) bool {
	return ttl > 0 && c.busy.Load() == 0 && now.Sub(time.Unix(0, c.last.Load())) >= ttl
}

// Call is one run sent to a runner, as the caller saw it.
type Call struct {
	// Verb is the run's verb (create, plan, apply-plan, ...).
	Verb string
	// Wall is how long the caller waited, from its request to the reply.
	Wall time.Duration
	// Runner is how long the runner spent on the run; Wall less Runner is the hop (the
	// request and reply on the wire, their encoding). Zero when no reply came.
	Runner time.Duration
	// Err is the run's error: its own, or that the runner did not answer (Unreachable).
	Err error
}

// Hop is the time the run spent getting to the runner and back.
func (c Call) Hop() time.Duration { return max(0, c.Wall-c.Runner) }

// Unreachable reports whether the runner did not answer, or stopped answering.
func (c Call) Unreachable() bool { return unreachable(c.Err) }

// NewClient returns a client of the runner serving HTTP on the unix socket at path,
// presenting token.
func NewClient(socket, token string, onRun func(engine.Run)) *Client {
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}
	return &Client{http: &http.Client{Transport: &http.Transport{DialContext: dial, MaxIdleConnsPerHost: 64}}, base: "http://runner",
		token: token, OnRun: onRun}
}

// NewTLSClient returns a client of the runner serving HTTPS at url (https://host:port),
// which must present the certificate certPEM (pinned: the controller made it for that
// runner), presenting token.
func NewTLSClient(url string, certPEM []byte, token string, onRun func(engine.Run)) (*Client, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(certPEM) {
		return nil, errors.New("the runner's certificate is no PEM certificate")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS13}, MaxIdleConnsPerHost: 64}
	return &Client{http: &http.Client{Transport: tr}, base: strings.TrimSuffix(url, "/"), token: token, OnRun: onRun}, nil
}

// verifyAs checks the runner's certificate for name, whatever address the client dials.
func (c *Client) verifyAs(name string) {
	if tr, ok := c.http.Transport.(*http.Transport); ok && tr.TLSClientConfig != nil {
		tr.TLSClientConfig.ServerName = name
	}
}

// call asks the runner for verb and reads its answer: the runs as they end, then the
// reply; OnCall hears of it.
func (c *Client) call(ctx context.Context, verb string, req request) (*reply, error) {
	c.touch(1)
	defer c.touch(-1)
	start := time.Now()
	rep, err := c.exchange(ctx, verb, req)
	if c.OnCall != nil {
		call := Call{Verb: verb, Wall: time.Since(start), Err: err}
		if rep != nil {
			call.Runner = rep.Elapsed
		}
		c.OnCall(call)
	}
	return rep, err
}

// exchange sends the request for verb and reads the answer.
func (c *Client) exchange(ctx context.Context, verb string, req request) (*reply, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode run: %w", err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/"+verb, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Authorization", "Bearer "+c.token)
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, &unreachableError{fmt.Errorf("reach the runner: %w", err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("runner refused %s: %s: %s", verb, resp.Status, bytes.TrimSpace(msg))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	for sc.Scan() {
		var f frame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return nil, fmt.Errorf("read the runner's answer: %w", err)
		}
		if f.Run != nil && c.OnRun != nil {
			c.OnRun(f.Run.run())
		}
		if f.Reply != nil {
			return f.Reply, f.Reply.Error.err() // the reply comes back with its error: OnCall reads its time
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return nil, engine.Unrecorded(fmt.Errorf("%s was interrupted: %w", verb, ctx.Err()))
		}
		return nil, engine.Unrecorded(&unreachableError{fmt.Errorf("the runner's answer to %s broke off: %w", verb, err)})
	}
	return nil, engine.Unrecorded(&unreachableError{fmt.Errorf("the runner ended %s without a reply", verb)})
}

// unreachableError is a runner that did not answer, or stopped answering.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// unreachable reports whether err says the runner did not answer.
func unreachable(err error) bool {
	var u *unreachableError
	return errors.As(err, &u)
}

// Info asks the runner what it says of itself.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var info Info
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/"+pathInfo, nil)
	if err != nil {
		return info, err
	}
	hreq.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(hreq)
	if err != nil {
		return info, &unreachableError{fmt.Errorf("reach the runner: %w", err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return info, fmt.Errorf("runner refused info: %s", resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&info); err != nil {
		return info, fmt.Errorf("read the runner's info: %w", err)
	}
	return info, nil
}

// Create makes a workspace's resources with one combined plan-and-apply.
func (c *Client) Create(ctx context.Context, ws engine.Workspace) (engine.Result, error) {
	rep, err := c.call(ctx, verbCreate, request{Workspace: ws})
	if err != nil || rep.Result == nil {
		return engine.Result{}, err
	}
	return *rep.Result, nil
}

// Plan makes and saves a plan.
func (c *Client) Plan(ctx context.Context, ws engine.Workspace, opts engine.PlanOptions) (*engine.Plan, error) {
	rep, err := c.call(ctx, verbPlan, request{Workspace: ws, Options: &opts})
	if err != nil {
		return nil, err
	}
	return rep.Plan, nil
}

// ApplyPlan applies a saved plan exactly.
func (c *Client) ApplyPlan(ctx context.Context, ws engine.Workspace, plan *engine.Plan) (engine.Result, error) {
	rep, err := c.call(ctx, verbApplyPlan, request{Workspace: ws, Plan: plan})
	if err != nil || rep.Result == nil {
		return engine.Result{}, err
	}
	return *rep.Result, nil
}

// Outputs reads the outputs.
func (c *Client) Outputs(ctx context.Context, ws engine.Workspace) (map[string]engine.Output, error) {
	rep, err := c.call(ctx, verbOutputs, request{Workspace: ws})
	if err != nil {
		return nil, err
	}
	return rep.Outputs, nil
}

// Destroy destroys everything in the workspace's state.
func (c *Client) Destroy(ctx context.Context, ws engine.Workspace) error {
	_, err := c.call(ctx, verbDestroy, request{Workspace: ws})
	return err
}

// PullState reads the workspace's state.
func (c *Client) PullState(ctx context.Context, ws engine.Workspace) (string, error) {
	rep, err := c.call(ctx, verbPullState, request{Workspace: ws})
	if err != nil {
		return "", err
	}
	return rep.State, nil
}

// ClearStaleLock releases the workspace's state lock when its holder is provably gone
// (Local.ClearStaleLock).
func (c *Client) ClearStaleLock(ctx context.Context, ws engine.Workspace, recorded bool) (statelock.Released, error) {
	rep, err := c.call(ctx, verbClearStale, request{Workspace: ws, CreateRecorded: recorded})
	if err != nil || rep.Released == nil {
		return statelock.Released{}, err
	}
	return *rep.Released, nil
}

// Activity is what terraform is doing now in the workspace, asked beside its run.
func (c *Client) Activity(ctx context.Context, ws engine.Workspace) (engine.Activity, error) {
	rep, err := c.exchange(ctx, verbActivity, request{Workspace: ws})
	if err != nil || rep.Activity == nil {
		return engine.Activity{}, err
	}
	return *rep.Activity, nil
}

// Remove deletes the workspace's directory.
func (c *Client) Remove(ctx context.Context, ws engine.Workspace) error {
	_, err := c.call(ctx, verbRemove, request{Workspace: ws})
	return err
}
