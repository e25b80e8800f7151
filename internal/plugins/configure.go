package plugins

import (
	"bytes"
	"context"
)

// configureMethods configure a provider process; each answers with its diagnostics in
// field 1 (protocols 5 and 6 alike).
var configureMethods = map[string]bool{"/tfplugin5.Provider/Configure": true, "/tfplugin6.Provider/ConfigureProvider": true}

// configureDiagnostics is the field of a configure answer that holds its diagnostics.
const configureDiagnostics = 1

// configuration remembers what one process was last configured with. Terraform
// configures its providers in every command, and twice in an apply (for the plan, then
// for the apply); the runs a process serves share its key, so they configure it alike,
// and for the aws provider each time costs about as much CPU as planning a bucket. A
// request equal to the one the process was last configured with, without diagnostics,
// is answered with that answer; any other goes to the provider and becomes the last.
type configuration struct {
	turn chan struct{} // one configure at a time
	// known says the process was configured with req, which answered resp.
	known     bool
	req, resp []byte
}

func newConfiguration() *configuration { return &configuration{turn: make(chan struct{}, 1)} }

// answer answers a configure request: from the last configuration when req repeats
// it, else by asking the provider (ask). Configures wait their turn: the one after a
// configure in flight sees what that one did.
func (c *configuration) answer(ctx context.Context, req []byte, ask func() ([]byte, error)) ([]byte, error) {
	select {
	case c.turn <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.turn }()
	if c.known && bytes.Equal(c.req, req) {
		return c.resp, nil
	}
	c.known = false // whatever the provider does with req, the last configuration is gone
	resp, err := ask()
	if err == nil && !hasField(resp, configureDiagnostics) {
		c.known, c.req, c.resp = true, bytes.Clone(req), resp
	}
	return resp, err
}
