package plugins

import (
	"context"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/stats"
)

// connKey holds, in the context of every call on a connection to the proxy, the
// connection's number: each terraform run dials its own connection, so the number tells
// the calls of one run from another's.
type connKey struct{}

// connTagger numbers the proxy's connections.
type connTagger struct{ last atomic.Int64 }

var _ stats.Handler = (*connTagger)(nil)

func (t *connTagger) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connKey{}, t.last.Add(1))
}
func (*connTagger) HandleConn(context.Context, stats.ConnStats)                     {}
func (*connTagger) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (*connTagger) HandleRPC(context.Context, stats.RPCStats)                       {}

// connOf is the number of the connection a call came on; 0 when unknown.
func connOf(ctx context.Context) int64 {
	n, _ := ctx.Value(connKey{}).(int64)
	return n
}

// inFlight are the calls the proxy is relaying, by connection, so that one run's stop
// request can end its own calls without ending those of the runs that share the process.
type inFlight struct {
	mu     sync.Mutex
	byConn map[int64]map[*context.CancelFunc]bool
}

// start registers a call on the connection of ctx; the returned context ends when the
// call is cancelled, and done must be called when it ends.
func (f *inFlight) start(ctx context.Context) (context.Context, func()) {
	conn := connOf(ctx)
	ctx, cancel := context.WithCancel(ctx)
	f.mu.Lock()
	if f.byConn == nil {
		f.byConn = map[int64]map[*context.CancelFunc]bool{}
	}
	if f.byConn[conn] == nil {
		f.byConn[conn] = map[*context.CancelFunc]bool{}
	}
	f.byConn[conn][&cancel] = true
	f.mu.Unlock()
	return ctx, func() {
		f.mu.Lock()
		delete(f.byConn[conn], &cancel)
		if len(f.byConn[conn]) == 0 {
			delete(f.byConn, conn)
		}
		f.mu.Unlock()
		cancel()
	}
}

// cancel ends every call in flight on the connection of ctx.
func (f *inFlight) cancel(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.byConn[connOf(ctx)] {
		(*c)()
	}
}
