package plugins

import "context"

// Off lends no provider process: each terraform run starts its own providers. The
// engine holds it in place of a Pool when provider reuse is off.
type Off struct{}

// Acquire returns a Lease that reattaches terraform to nothing.
func (Off) Acquire(context.Context, []Provider, map[string]string, []byte, []string) (*Lease, error) {
	return &Lease{}, nil
}

// Started is 0: Off starts no process.
func (Off) Started() int { return 0 }

// Stop does nothing.
func (Off) Stop() {}

// Stats is empty: Off keeps no process.
func (Off) Stats() map[string]ProviderStats { return nil }
