package plugins

import (
	"crypto/sha256"
	"fmt"
	"sync"

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

// answers caches pure answers by binary, method and request.
type answers struct {
	mu      sync.Mutex
	entries map[[32]byte][]byte
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
	if a.entries == nil || len(a.entries) >= maxAnswers {
		a.entries = map[[32]byte][]byte{}
	}
	a.entries[k] = b
}

// pureCalls answers one process's pure calls: from the cache shared by every process of
// its binary, asking the provider the first time, with the schema trimmed to the types
// terraform is told of.
type pureCalls struct {
	binary string
	cache  *answers
	// types are the resource and data source types terraform is told of; nil means all.
	types map[string]bool

	trimMu  sync.Mutex
	trimmed []byte // the schema answer, trimmed to types
}

// isPure reports whether method's answer may come from the cache.
func isPure(method string) bool {
	_, ok := pureMethods[method]
	return ok
}

// answer is the answer to the pure call method with req; ask asks the provider. An
// answer with diagnostics goes back as it is, and is not cached.
func (c *pureCalls) answer(method string, req []byte, ask func() ([]byte, error)) ([]byte, error) {
	diagnostics, ok := pureMethods[method]
	if !ok {
		return nil, fmt.Errorf("%s is not a pure call", method)
	}
	k := c.cache.key(c.binary, method, req)
	resp, ok := c.cache.get(k)
	if !ok {
		var err error
		if resp, err = ask(); err != nil {
			return nil, err
		}
		if hasField(resp, diagnostics) {
			return resp, nil
		}
		c.cache.put(k, resp)
	}
	if schemaMethods[method] && c.types != nil {
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
