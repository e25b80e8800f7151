package module

import (
	"crypto/sha256"
	"sync"

	"github.com/golang/groupcache/lru"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
)

// inspectedModules is how many parsed modules inspectFiles keeps: a fleet's workspaces
// come from a few modules, each parsed once rather than once per workspace run.
const inspectedModules = 256

// inspected holds the parsed modules (and the errors of refused ones) by their files'
// digest. Callers only read what it returns.
var inspected = struct {
	sync.Mutex
	cache *lru.Cache
}{cache: lru.New(inspectedModules)}

// inspection is one module's parse: the module, or why it was refused.
type inspection struct {
	mod *tfconfig.Module
	err error
}

// inspectFiles loads the top-level configuration files among files with
// terraform-config-inspect, once per distinct set of files; a directory without any,
// or with errors, is refused. The module returned is shared: read it, never change it.
func inspectFiles(files map[string][]byte) (*tfconfig.Module, error) {
	key := filesDigest(files)
	inspected.Lock()
	v, ok := inspected.cache.Get(key)
	inspected.Unlock()
	if ok {
		in := v.(inspection)
		return in.mod, in.err
	}
	mod, err := parseFiles(files)
	inspected.Lock()
	inspected.cache.Add(key, inspection{mod: mod, err: err})
	inspected.Unlock()
	return mod, err
}

// filesDigest is a SHA-256 of files (WriteFiles).
func filesDigest(files map[string][]byte) [sha256.Size]byte {
	h := sha256.New()
	WriteFiles(h, files, nil)
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}
