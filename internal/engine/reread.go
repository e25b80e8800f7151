package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/plugins"
)

// RereadVerb is the verb Options.OnRun reports a drift check by that was answered
// without terraform: the providers, asked the reads of the workspace's last plan
// without changes again, answered them alike. A reread that found a change is not
// reported: terraform's plan that follows is.
const RereadVerb = "reread"

// StateVersioner tells the version of a workspace's state, named by its backend
// settings: it changes whenever the state is written. A StateLocker that is one lets
// drift checks be answered by rereads (PlanOptions.Reread).
type StateVersioner interface {
	// StateVersion is the state's version; empty when there is no state.
	StateVersion(ctx context.Context, backend map[string]string) (string, error)
}

// rereads hold what each workspace's last plan without changes read from its
// providers, and what that plan was made from.
type rereads struct {
	mu   sync.Mutex
	byWS map[string]*lastReads
}

// lastReads are the reads of one workspace's last plan without changes.
type lastReads struct {
	inputs string   // digest of the inputs the plan was made from (inputsDigest)
	state  string   // version of the state it was made from
	types  []string // the types its providers were told of
	lock   []byte   // the dependency lock it ran with
	reads  *plugins.Reads
}

func (r *rereads) get(id string) *lastReads {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byWS[id]
}

func (r *rereads) put(id string, last *lastReads) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byWS == nil {
		r.byWS = map[string]*lastReads{}
	}
	r.byWS[id] = last
}

func (r *rereads) forget(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byWS, id)
}

// rereadable reports whether a plan with opts may be answered by a reread: a drift
// check's plan, which refreshes everything, reads no outputs and moves no provider.
// (Newer provider versions are looked for after the plan, a reread's too.)
func (o PlanOptions) rereadable() bool {
	return o.Reread && !o.SkipRefresh && !o.Outputs && o.LockedBefore == nil && len(o.Targets) == 0
}

// reread answers a drift check of ws without terraform when it can: the inputs and the
// state are those of its last plan without changes, and its providers, asked that
// plan's reads again, answer them alike. Terraform, run again, would then make the same
// calls and plan no change again. Any doubt (and any error, which a terraform run then
// reports for itself) says no.
func (e *Engine) reread(ctx context.Context, ws Workspace, opts PlanOptions) (*Plan, bool) {
	last := e.rereads.get(ws.ID)
	if !opts.rereadable() || last == nil {
		return nil, false
	}
	defer e.track(ws.ID)()
	if e.inputsDigest(ws) != last.inputs {
		return nil, false
	}
	if version, err := e.stateVersion(ctx, ws); err != nil || version != last.state {
		return nil, false
	}
	start := time.Now()
	if same, err := e.readAgain(ctx, ws, last); err != nil || !same {
		e.rereads.forget(ws.ID) // terraform plans, and reports what went wrong itself
		return nil, false
	}
	if e.opts.OnRun != nil {
		e.opts.OnRun(Run{Verb: RereadVerb, Workspace: ws.ID, Kind: ws.Kind, Name: ws.Name, Started: start, Duration: time.Since(start)})
	}
	return &Plan{Resources: -1, PriorResources: -1, Lock: last.lock}, true
}

// readAgain asks ws's providers last's reads again; same is true when every answer is
// the one recorded.
func (e *Engine) readAgain(ctx context.Context, ws Workspace, last *lastReads) (same bool, err error) {
	providers, err := installedProviders(e.Dir(ws.ID))
	if err != nil {
		return false, err
	}
	var lease *plugins.Lease
	if len(providers) > 0 {
		if lease, err = e.plugins.Acquire(ctx, providers, e.env(ws), providerConfig(ws), last.types); err != nil {
			return false, err
		}
		defer func() { lease.Release(ctx.Err() == nil) }()
	}
	return lease.Reread(ctx, last.reads)
}

// recordReads has the providers lent to ws record what its run reads; stop ends the
// recording. reads is nil when they cannot: providers terraform starts itself, or a
// process that cannot record.
func (e *Engine) recordReads(ws Workspace) (reads *plugins.Reads, stop func()) {
	e.mu.Lock()
	lease := e.lent[ws.ID]
	e.mu.Unlock()
	if lease == nil {
		if providers, err := installedProviders(e.Dir(ws.ID)); err != nil || len(providers) > 0 {
			return nil, func() {}
		}
		return plugins.NewReads(), func() {} // no provider: nothing to read
	}
	reads = plugins.NewReads()
	restore, err := lease.Record(reads)
	if err != nil {
		return nil, func() {}
	}
	return reads, restore
}

// rememberReads keeps reads, those of a plan of ws without changes made with opts and
// lock, for the drift checks that follow, when they answer for that plan: the plan
// refreshed everything, the configuration reads no other workspace's state (which no
// provider reads), and the state's version is known.
func (e *Engine) rememberReads(ctx context.Context, ws Workspace, opts PlanOptions, reads *plugins.Reads, lock []byte) {
	if reads == nil || reads.Unsure() != "" || opts.SkipRefresh || len(opts.Targets) > 0 {
		return
	}
	types := e.namedTypes(ws)
	if types == nil || slices.Contains(types, "terraform_remote_state") {
		return
	}
	version, err := e.stateVersion(ctx, ws)
	if err != nil {
		return
	}
	e.rereads.put(ws.ID, &lastReads{inputs: e.inputsDigest(ws), state: version, types: types, lock: lock, reads: reads})
}

// stateVersion is the version of ws's state: its Secret's, from the locker, for the
// kubernetes backend; a digest of its file for the local backend. Another backend's is
// not known.
func (e *Engine) stateVersion(ctx context.Context, ws Workspace) (string, error) {
	if e.locksItself(ws) {
		v, ok := e.opts.Locker.(StateVersioner)
		if !ok {
			return "", errors.New("the state's version is not known")
		}
		return v.StateVersion(ctx, ws.BackendConfig)
	}
	dir := e.Dir(ws.ID)
	if _, err := os.Stat(filepath.Join(dir, dataDir, "terraform.tfstate")); err == nil || len(ws.BackendConfig) > 0 {
		return "", errors.New("the state's version is not known") // a backend other than local
	}
	b, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// inputsDigest is a digest of everything a plan of ws is made from but its state and
// what its providers read: terraform, its files, its environment (credentials
// included), its backend settings, its secret variables and its lock. Each part is
// length-prefixed, as module.WriteFiles writes files, so no value passes for another.
func (e *Engine) inputsDigest(ws Workspace) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s", len(e.execPath), e.execPath)
	module.WriteFiles(h, ws.Files, nil)
	for _, part := range []map[string]string{e.env(ws), ws.BackendConfig} {
		fmt.Fprintf(h, "\x00%d\x00", len(part))
		module.WriteFiles(h, asBytes(part), nil)
	}
	secrets, _ := json.Marshal(ws.SecretVars) // its maps' keys sorted
	fmt.Fprintf(h, "\x00%d\x00%s\x00%d\x00%s", len(secrets), secrets, len(ws.Lock), ws.Lock)
	return hex.EncodeToString(h.Sum(nil))
}

// asBytes is m with its values as bytes.
func asBytes(m map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = []byte(v)
	}
	return out
}
