package engine

import (
	"context"
	"sync"
)

// initFlights lets one workspace of a module run terraform init at a time: the others
// of the same module wait for it and then copy its result from the init cache, rather
// than each run an init of its own (ten cold workspaces of one module ran ten inits
// side by side, each hashing the same provider package).
type initFlights struct {
	mu      sync.Mutex
	running map[string]chan struct{} // closed once the init of the module ends
}

// lead makes the caller the one to run module's init, when no init of it runs: it
// returns done, to call once the init has ended (saved or not). Otherwise it waits for
// the running one to end and returns nil: the caller looks in the cache again. An error
// means ctx ended first.
func (f *initFlights) lead(ctx context.Context, module string) (done func(), err error) {
	f.mu.Lock()
	if running, ok := f.running[module]; ok {
		f.mu.Unlock()
		select {
		case <-running:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.running == nil {
		f.running = map[string]chan struct{}{}
	}
	ended := make(chan struct{})
	f.running[module] = ended
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.running, module)
		f.mu.Unlock()
		close(ended)
	}, nil
}
