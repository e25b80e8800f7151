package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Target is one runner's metrics endpoint, as Prometheus' file-based service discovery
// reads it: its address, and the pool it serves as a label.
type Target struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// targets are the metrics endpoints of the running runners.
type targets struct {
	mu   sync.Mutex
	addr map[PoolRef]string
}

// set records pool's endpoint (empty: it has none, or stopped) and returns them all,
// ordered by pool.
func (t *targets) set(pool PoolRef, addr string) []Target {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.addr == nil {
		t.addr = map[PoolRef]string{}
	}
	if addr == "" {
		delete(t.addr, pool)
	} else {
		t.addr[pool] = addr
	}
	return t.listLocked()
}

// list returns the endpoints, ordered by pool.
func (t *targets) list() []Target {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.listLocked()
}

func (t *targets) listLocked() []Target {
	out := []Target{}
	for p, a := range t.addr {
		out = append(out, Target{Targets: []string{a}, Labels: map[string]string{"pool": p.String()}})
	}
	slices.SortFunc(out, func(a, b Target) int { return strings.Compare(a.Labels["pool"], b.Labels["pool"]) })
	return out
}

// publish records pool's metrics endpoint and, with MetricsTargets, rewrites that file
// (whole, by rename, so that a reader never sees half of it).
func (p *Processes) publish(pool PoolRef, addr string) {
	all := p.targets.set(pool, addr)
	if p.MetricsTargets == "" {
		return
	}
	raw, err := json.MarshalIndent(all, "", "  ")
	if err == nil {
		tmp := p.MetricsTargets + ".tmp"
		if err = os.WriteFile(tmp, append(raw, '\n'), 0o644); err == nil {
			err = os.Rename(tmp, filepath.Clean(p.MetricsTargets))
		}
	}
	if err != nil {
		p.Log.Error(err, "cannot write the runners' metrics targets", "file", p.MetricsTargets)
	}
}

// Targets lists the running runners' metrics endpoints, ordered by pool.
func (p *Processes) Targets() []Target { return p.targets.list() }
