package plugins

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"google.golang.org/protobuf/encoding/protowire"
)

// pureMethods are the provider calls whose answer depends only on the provider binary
// and the request: answered once per binary, then from the cache. Each maps to the field
// number of the diagnostics in its answer (the same in protocols 5 and 6): an answer
// with diagnostics is never cached, so a problem is never replayed.
var pureMethods = map[string]protowire.Number{
	"/tfplugin5.Provider/GetSchema":                  4,
	"/tfplugin6.Provider/GetProviderSchema":          4,
	"/tfplugin5.Provider/GetMetadata":                2,
	"/tfplugin6.Provider/GetMetadata":                2,
	"/tfplugin5.Provider/GetFunctions":               2,
	"/tfplugin6.Provider/GetFunctions":               2,
	"/tfplugin5.Provider/GetResourceIdentitySchemas": 2,
	"/tfplugin6.Provider/GetResourceIdentitySchemas": 2,
	"/tfplugin5.Provider/PrepareProviderConfig":      2,
	"/tfplugin6.Provider/ValidateProviderConfig":     2,
}

// answers caches pure answers by binary, method and request. A question already being
// asked is not asked again: the runs that ask it meanwhile wait for its answer (ten cold
// runs of the aws provider asked it ten times for the validation of the same provider
// configuration, each costing seconds of CPU).
type answers struct {
	mu      sync.Mutex
	entries map[[32]byte][]byte
	asking  map[[32]byte]*asked
}

// asked is a question being asked: done is closed once resp or err is set.
type asked struct {
	done    chan struct{}
	resp    []byte
	err     error
	waiters int // runs waiting for the answer
}

// maxAnswers bounds the cache; it starts over when full.
const maxAnswers = 4096

func (a *answers) key(binary, method string, req []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(binary + "\x00" + method + "\x00"))
	h.Write(req)
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

func (a *answers) get(k [32]byte) ([]byte, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, ok := a.entries[k]
	return b, ok
}

func (a *answers) put(k [32]byte, b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.putLocked(k, b)
}

func (a *answers) putLocked(k [32]byte, b []byte) {
	if a.entries == nil || len(a.entries) >= maxAnswers {
		a.entries = map[[32]byte][]byte{}
	}
	a.entries[k] = b
}

// do answers question k from the cache, from the asking of it already under way, or by
// asking itself; keep says whether an answer may be cached. A waiter whose asker failed
// (its run ended, say) asks again itself; one whose ctx ends stops waiting.
func (a *answers) do(ctx context.Context, k [32]byte, ask func() ([]byte, error), keep func([]byte) bool) ([]byte, error) {
	for {
		a.mu.Lock()
		if b, ok := a.entries[k]; ok {
			a.mu.Unlock()
			return b, nil
		}
		if q := a.asking[k]; q != nil {
			q.waiters++
			a.mu.Unlock()
			select {
			case <-q.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if q.err == nil {
				return q.resp, nil // an answer with diagnostics too: the same question's
			}
			continue
		}
		q := &asked{done: make(chan struct{})}
		if a.asking == nil {
			a.asking = map[[32]byte]*asked{}
		}
		a.asking[k] = q
		a.mu.Unlock()
		q.resp, q.err = ask()
		a.mu.Lock()
		delete(a.asking, k)
		if q.err == nil && keep(q.resp) {
			a.putLocked(k, q.resp)
		}
		a.mu.Unlock()
		close(q.done)
		return q.resp, q.err
	}
}

// pureCalls answers one process's pure calls: from the cache shared by every process of
// its binary, asking the provider the first time, with the schema trimmed to the types
// terraform is told of.
type pureCalls struct {
	binary string
	cache  *answers
	// types are the resource and data source types terraform is told of; nil means all.
	types map[string]bool
	// log says, at debug level, what the provider was asked and how long it took.
	log logr.Logger

	trimMu  sync.Mutex
	trimmed []byte // the schema answer, trimmed to types
}

// isPure reports whether method's answer may come from the cache.
func isPure(method string) bool {
	_, ok := pureMethods[method]
	return ok
}

// answer is the answer to the pure call method with req; ask asks the provider, unless
// the same question is being asked already. An answer with diagnostics goes back as it
// is, and is not cached.
func (c *pureCalls) answer(ctx context.Context, method string, req []byte, ask func() ([]byte, error)) ([]byte, error) {
	diagnostics, ok := pureMethods[method]
	if !ok {
		return nil, fmt.Errorf("%s is not a pure call", method)
	}
	asking := func() ([]byte, error) {
		began := time.Now()
		resp, err := ask()
		kv := []any{"binary", filepath.Base(c.binary), "method", method, "duration", time.Since(began).Round(time.Millisecond).String(), "bytes", len(resp)}
		if err != nil {
			kv = append(kv, "error", err.Error())
		}
		c.log.V(1).Info("asked the provider a pure call", kv...)
		return resp, err
	}
	resp, err := c.cache.do(ctx, c.cache.key(c.binary, method, req), asking, func(resp []byte) bool { return !hasField(resp, diagnostics) })
	if err != nil {
		return nil, err
	}
	if schemaMethods[method] && c.types != nil && !hasField(resp, diagnostics) {
		return c.trim(resp)
	}
	return resp, nil
}

// trim is the schema answer resp trimmed to the types, worked out once.
func (c *pureCalls) trim(resp []byte) ([]byte, error) {
	c.trimMu.Lock()
	defer c.trimMu.Unlock()
	if c.trimmed == nil {
		trimmed, err := trimSchema(resp, c.types)
		if err != nil {
			return nil, err
		}
		c.trimmed = trimmed
	}
	return c.trimmed, nil
}

// hasField reports whether a protobuf message holds top-level field num (or cannot be
// read, to be safe).
func hasField(msg []byte, num protowire.Number) bool {
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return true
		}
		if n == num {
			return true
		}
		msg = msg[l:]
		l = protowire.ConsumeFieldValue(n, typ, msg)
		if l < 0 {
			return true
		}
		msg = msg[l:]
	}
	return false
}
