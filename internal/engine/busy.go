package engine

// Busy reports whether a verb of this engine is running for workspace id.
func (e *Engine) Busy(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inflight[id] > 0
}

// track counts a verb in flight for workspace id until the returned func is called.
func (e *Engine) track(id string) func() {
	e.mu.Lock()
	if e.inflight == nil {
		e.inflight = map[string]int{}
	}
	e.inflight[id]++
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.inflight[id]--; e.inflight[id] <= 0 {
			delete(e.inflight, id)
		}
	}
}
