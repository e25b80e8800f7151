package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/terraform-exec/tfexec"

	"terraplane.io/terraplane/internal/procmem"
)

// Defaults of Options.
const (
	DefaultTTL            = 10 * time.Minute
	DefaultMaxUses        = 100
	DefaultRunsPerProcess = 16
)

// Options configure a Pool.
type Options struct {
	// TTL is how long a process may live; 0 means DefaultTTL.
	TTL time.Duration
	// IdleTTL is how long a process may wait unused; 0 means TTL / 2.
	IdleTTL time.Duration
	// MaxUses is how many runs a process serves before it is replaced; 0 means DefaultMaxUses.
	MaxUses int
	// RunsPerProcess is how many terraform runs one process serves at once; 0 means
	// DefaultRunsPerProcess. Runs that share a process share its key, so they configure
	// it alike.
	RunsPerProcess int
	// Starter starts the provider processes; nil runs their binaries, each behind a
	// proxy that answers pure calls from a cache shared by the pool's processes.
	Starter Starter
	// MemoryBudget caps the resident memory of the pool's processes, in bytes: past it,
	// idle processes are stopped, the least recently used first; 0 means no cap.
	MemoryBudget int64
	// RSS reads a process's resident memory in bytes; nil reads /proc.
	RSS func(pid int) int64
	// Log says when a process is stopped to stay within the memory budget.
	Log logr.Logger
}

// Provider is one provider a workspace uses: its address and installed binary.
type Provider struct {
	// Address is its source address, e.g. registry.terraform.io/hashicorp/aws.
	Address string
	// Binary is its executable.
	Binary string
}

// Pool lends warm provider processes to terraform runs.
type Pool struct {
	opts    Options
	dir     string
	now     func() time.Time
	kills   sync.WaitGroup // processes being killed
	mu      sync.Mutex
	live    map[string][]*process // processes that may take more runs, by key
	running map[*process]bool     // processes not yet told to die: live, or retired and still in use
	started int                   // processes started so far
	gates   atomic.Int64          // runs served on sockets of their own (Lease.Gate)
	counts  map[string]*counts    // what the pool did, by provider address
	evicted int                   // processes stopped for the memory budget
	stopped bool
	done    chan struct{}
}

// counts are what the pool did for one provider.
type counts struct{ hits, misses, evictions uint64 }

// NewPool returns a pool whose proxy sockets live in a private directory under dir.
func NewPool(dir string, opts Options) (*Pool, error) {
	p, err := newPool(dir, opts, time.Now)
	if err != nil {
		return nil, err
	}
	go p.janitor()
	return p, nil
}

// newPool is NewPool reading the time from now, without its janitor.
func newPool(dir string, opts Options, now func() time.Time) (*Pool, error) {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.IdleTTL <= 0 {
		opts.IdleTTL = opts.TTL / 2
	}
	if opts.MaxUses <= 0 {
		opts.MaxUses = DefaultMaxUses
	}
	if opts.RunsPerProcess <= 0 {
		opts.RunsPerProcess = DefaultRunsPerProcess
	}
	if opts.RSS == nil {
		opts.RSS = residentMemory
	}
	if opts.Log.GetSink() == nil {
		opts.Log = logr.Discard()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	sockets, err := socketDir(dir)
	if err != nil {
		return nil, err
	}
	if opts.Starter == nil {
		opts.Starter = execStarter{cache: &answers{}, log: opts.Log}
	}
	return &Pool{opts: opts, dir: sockets, now: now, live: map[string][]*process{}, running: map[*process]bool{},
		counts: map[string]*counts{}, done: make(chan struct{})}, nil
}

// Lease is the provider processes one terraform run uses, and how terraform reaches them.
type Lease struct {
	// Reattach is what terraform is given (TF_REATTACH_PROVIDERS).
	Reattach tfexec.ReattachInfo
	procs    []*process
	// addresses are the provider addresses procs are lent under, in order: a process
	// serves every address of its binary (OpenTofu's and Terraform's registry names of
	// one mirrored provider), and its own is the first it was started for.
	addresses []string
	pool      *Pool
}

// Key identifies the processes that may serve a run: the provider binary, the
// environment (credentials included), the workspace's provider configuration and the
// types its processes tell terraform of.
func Key(binary string, env map[string]string, config []byte, types []string) string {
	h := sha256.New()
	// every part is length-prefixed: no value can pass for another split
	field := func(s string) { fmt.Fprintf(h, "%d:%s", len(s), s) }
	field(binary)
	fmt.Fprintf(h, "%d;", len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		field(k)
		field(env[k])
	}
	field(string(config))
	if types == nil {
		h.Write([]byte("all types"))
	} else {
		fmt.Fprintf(h, "%d;", len(types))
		for _, t := range slices.Sorted(slices.Values(types)) {
			field(t)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Acquire lends a process for each provider, starting those no idle process can serve.
// config is the workspace's provider configuration, part of each process's key; types
// are the resource and data source types the run may need schemas of (nil: all of them).
func (p *Pool) Acquire(ctx context.Context, providers []Provider, env map[string]string, config []byte, types []string) (*Lease, error) {
	l := &Lease{Reattach: tfexec.ReattachInfo{}, pool: p}
	var want map[string]bool
	if types != nil {
		want = map[string]bool{}
		for _, t := range types {
			want[t] = true
		}
	}
	for _, prov := range providers {
		proc, err := p.get(ctx, prov, Key(prov.Binary, env, config, types), env, want)
		if err != nil {
			l.Release(true) // never used: the processes got so far serve on
			return nil, err
		}
		l.procs, l.addresses = append(l.procs, proc), append(l.addresses, prov.Address)
		// Pid is the provider's own: terraform's plugin client kills the process it is
		// given when it cannot reach the address, and it must never be the controller.
		// Test keeps terraform from stopping the provider when its run ends.
		l.Reattach[prov.Address] = tfexec.ReattachConfig{Protocol: "grpc", ProtocolVersion: proc.handle.Protocol(), Pid: proc.handle.Pid(), Test: true,
			Addr: tfexec.ReattachConfigAddr{Network: "unix", String: proc.socket}}
	}
	return l, nil
}

// get lends the live process of key with the fewest runs, when it may take one more, or
// starts one. Runs that arrive while a process starts wait for it rather than start
// their own.
func (p *Pool) get(ctx context.Context, prov Provider, key string, env map[string]string, types map[string]bool) (*process, error) {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return nil, fmt.Errorf("provider pool stopped")
	}
	proc := p.leastBusy(key)
	if proc != nil {
		p.count(prov.Address).hits++
	} else {
		p.started++
		p.count(prov.Address).misses++
		proc = newProcess(key, prov.Address, filepath.Join(p.dir, fmt.Sprintf("p%d.sock", p.started)), p.now())
		p.live[key] = append(p.live[key], proc)
		p.running[proc] = true
		launch := Launch{Provider: prov, Env: env, Socket: proc.socket, Types: types, Stopping: func() bool { return p.stopAsked(proc) }}
		go p.start(proc, launch)
	}
	proc.runs++
	p.mu.Unlock()
	select {
	case <-proc.ready:
		if proc.err != nil {
			p.giveBack(proc, false) // a process that failed to start is never lent
			return nil, proc.err
		}
		return proc, nil
	case <-ctx.Done():
		p.giveBack(proc, true)
		return nil, ctx.Err()
	}
}

// start starts proc and says, at debug level, how long it took.
func (p *Pool) start(proc *process, l Launch) {
	began := time.Now()
	proc.start(p.opts.Starter, l)
	kv := []any{"provider", l.Provider.Address, "duration", time.Since(began).Round(time.Millisecond).String()}
	if proc.err != nil {
		kv = append(kv, "error", proc.err.Error())
	}
	p.opts.Log.V(1).Info("started a provider process", kv...)
}

// leastBusy is the live process of key with the fewest runs below RunsPerProcess;
// processes found dead are dropped. The caller holds p.mu.
func (p *Pool) leastBusy(key string) *process {
	var best *process
	for _, proc := range p.live[key] {
		if !proc.alive() {
			p.retire(proc)
			continue
		}
		if proc.runs < p.opts.RunsPerProcess && (best == nil || proc.runs < best.runs) {
			best = proc
		}
	}
	return best
}

// retire takes proc out of lending and kills it once no run uses it; before the pool
// stops, that is an eviction. The caller holds p.mu.
func (p *Pool) retire(proc *process) {
	proc.retired = true
	if !p.stopped {
		p.count(proc.address).evictions++
	}
	p.live[proc.key] = slices.DeleteFunc(p.live[proc.key], func(q *process) bool { return q == proc })
	if len(p.live[proc.key]) == 0 {
		delete(p.live, proc.key)
	}
	if proc.runs == 0 {
		p.kill(proc)
	}
}

// kill kills proc in the background. The caller holds p.mu.
func (p *Pool) kill(proc *process) {
	delete(p.running, proc)
	p.kills.Go(proc.kill)
}

// count is what the pool did for the provider address. The caller holds p.mu.
func (p *Pool) count(address string) *counts {
	c := p.counts[address]
	if c == nil {
		c = &counts{}
		p.counts[address] = c
	}
	return c
}

// stopAsked is told that a run using proc asked its provider to stop (terraform does
// when it is interrupted). The process is lent no more, and the request reaches the
// provider only when every run it serves has asked: one run's interruption must not
// cut short the others' provider calls.
func (p *Pool) stopAsked(proc *process) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !proc.retired {
		p.retire(proc)
	}
	proc.stops++
	return proc.stops >= proc.runs
}

// Release gives the processes back; healthy is false when the run was interrupted (a
// provider told to stop is not trusted again), and they are then retired.
func (l *Lease) Release(healthy bool) {
	if l == nil {
		return
	}
	for _, proc := range l.procs {
		l.pool.giveBack(proc, healthy)
	}
	l.procs, l.addresses = nil, nil
}

// giveBack ends one run's use of proc.
func (p *Pool) giveBack(proc *process, healthy bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		defer func() { go func() { time.Sleep(time.Second); _ = os.Remove(p.dir) }() }()
	}
	proc.runs--
	if !healthy && proc.stops > 0 {
		proc.stops-- // an interrupted run: the one that asked to stop, as far as can be told
	}
	proc.uses++
	proc.lastUsed = p.now()
	worn := proc.uses >= p.opts.MaxUses || proc.lastUsed.Sub(proc.started) > p.opts.TTL
	switch {
	case proc.retired && proc.runs == 0:
		p.kill(proc)
	case !proc.retired && (!healthy || p.stopped || !proc.alive() || worn):
		p.retire(proc)
	}
	p.fitBudget()
}

// fitBudget stops idle processes, the least recently used first, while the pool's
// processes hold more memory than its budget. The caller holds p.mu.
func (p *Pool) fitBudget() {
	if p.opts.MemoryBudget <= 0 {
		return
	}
	rss := map[*process]int64{}
	var total int64
	for _, procs := range p.live {
		for _, proc := range procs {
			if pid, ok := proc.pid(); ok {
				rss[proc] = p.opts.RSS(pid)
				total += rss[proc]
			}
		}
	}
	for total > p.opts.MemoryBudget {
		var lru *process
		for proc := range rss {
			if proc.runs == 0 && !proc.retired && (lru == nil || proc.lastUsed.Before(lru.lastUsed)) {
				lru = proc
			}
		}
		if lru == nil {
			return // every process is in use: the budget is exceeded until runs end
		}
		p.opts.Log.Info("stopped a warm provider process to stay within the memory budget", "provider", lru.address,
			"rssMiB", rss[lru]>>20, "totalMiB", total>>20, "budgetMiB", p.opts.MemoryBudget>>20)
		p.retire(lru)
		p.evicted++
		total -= rss[lru]
		delete(rss, lru)
	}
}

// Evicted counts the processes stopped to stay within the memory budget.
func (p *Pool) Evicted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.evicted
}

// residentMemory reads a process's resident set size from /proc; 0 when it cannot.
func residentMemory(pid int) int64 {
	rss, _ := procmem.RSS(pid)
	return int64(rss)
}

// janitor stops processes past their TTL or idle too long.
func (p *Pool) janitor() {
	t := time.NewTicker(min(p.opts.IdleTTL, p.opts.TTL) / 4)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		p.sweep()
	}
}

// sweep retires the live processes that died, outlived the TTL, or were idle too long.
func (p *Pool) sweep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	for _, procs := range p.live {
		for _, proc := range slices.Clone(procs) {
			idle := proc.runs == 0 && now.Sub(proc.lastUsed) > p.opts.IdleTTL
			if !proc.alive() || now.Sub(proc.started) > p.opts.TTL || idle {
				p.retire(proc)
			}
		}
	}
	p.fitBudget()
}

// Started counts the provider processes started so far.
func (p *Pool) Started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// Stop kills every idle process, and those in use as their runs end.
func (p *Pool) Stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	close(p.done)
	for _, procs := range p.live {
		for _, proc := range slices.Clone(procs) {
			p.retire(proc)
		}
	}
	p.mu.Unlock()
	// only once empty: the sockets of processes still in use stay until their runs end
	_ = os.Remove(p.dir)
}

// ProviderStats is what a pool did and holds for one provider.
type ProviderStats struct {
	// Processes counts the provider's processes running now: idle, lent, starting, or
	// retired and still serving a run.
	Processes int
	// Hits counts the runs lent a process that was already running (or starting).
	Hits uint64
	// Misses counts the processes started, each for a run no process could take.
	Misses uint64
	// Evictions counts the processes retired before the pool stopped: dead, past their
	// TTL, idle too long, worn out by uses, interrupted, or over the memory budget.
	Evictions uint64
	// PIDs are the process ids of those processes that serve already.
	PIDs []int
}

// Stats is what the pool did and holds, by provider address
// (registry.terraform.io/hashicorp/aws).
func (p *Pool) Stats() map[string]ProviderStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]ProviderStats{}
	for address, c := range p.counts {
		out[address] = ProviderStats{Hits: c.hits, Misses: c.misses, Evictions: c.evictions}
	}
	for proc := range p.running {
		s := out[proc.address]
		s.Processes++
		if pid, ok := proc.pid(); ok {
			s.PIDs = append(s.PIDs, pid)
		}
		out[proc.address] = s
	}
	for _, s := range out {
		slices.Sort(s.PIDs)
	}
	return out
}

// PIDs lists the process ids of the live provider processes.
func (p *Pool) PIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for _, procs := range p.live {
		for _, proc := range procs {
			if pid, ok := proc.pid(); ok {
				out = append(out, pid)
			}
		}
	}
	return out
}
