package plugins

import (
	"errors"
	"sync"
	"time"
)

// process is one provider process as the pool lends it: its handle once started, and
// the counts the pool's rules read.
type process struct {
	key      string
	address  string        // the provider's address, registry.terraform.io/hashicorp/aws
	socket   string        // where terraform reaches it
	ready    chan struct{} // closed once it serves (handle), or failed to start (err)
	handle   Handle
	err      error
	started  time.Time
	lastUsed time.Time
	uses     int  // runs served
	runs     int  // runs using it now (or waiting for it to start)
	stops    int  // of those, runs that asked it to stop
	retired  bool // lent no more; killed once runs is 0
	killOnce sync.Once
}

// newProcess is a process of key about to start at now, reached at socket.
func newProcess(key, address, socket string, now time.Time) *process {
	return &process{key: key, address: address, socket: socket, ready: make(chan struct{}), started: now, lastUsed: now}
}

// start starts the process with starter; ready is closed once it serves, or with err set.
func (p *process) start(starter Starter, l Launch) {
	defer close(p.ready)
	p.handle, p.err = starter.Start(l)
	if p.err == nil && p.handle == nil {
		p.err = errNoHandle
	}
}

// errNoHandle is a Starter's failure to give a handle or an error.
var errNoHandle = errors.New("provider starter returned no process")

// alive reports whether the provider is still running, or still starting.
func (p *process) alive() bool {
	select {
	case <-p.ready:
	default:
		return true
	}
	if p.err != nil {
		return false
	}
	select {
	case <-p.handle.Exited():
		return false
	default:
		return true
	}
}

// pid is the provider's process id once it serves; ok is false while it starts or when
// it failed to.
func (p *process) pid() (int, bool) {
	select {
	case <-p.ready:
		if p.err == nil {
			return p.handle.Pid(), true
		}
	default:
	}
	return 0, false
}

// kill stops the provider, once it has finished starting; a second kill does nothing.
func (p *process) kill() {
	p.killOnce.Do(func() {
		<-p.ready
		if p.handle != nil {
			p.handle.Kill()
		}
	})
}
