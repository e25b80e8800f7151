package plugins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Reads are what one run learnt from its providers about the world: each provider's
// configure call and its reads of managed objects and data sources, each request with
// the answer it got. Asked again with the same requests, providers that give the same
// answers have found nothing new, so a plan that followed from them would follow again.
// A run that made a call whose answer a repeat cannot stand for (an apply, an import,
// an ephemeral resource's) is unsure, and its reads answer for nothing.
type Reads struct {
	mu     sync.Mutex
	calls  map[string][]call // by provider address, in the order they came
	unsure string            // the first call that made the run unsure
}

// call is one recorded unary call: its method, request and answer as on the wire.
type call struct {
	method    string
	req, resp []byte
}

// NewReads is an empty record of a run's reads.
func NewReads() *Reads { return &Reads{calls: map[string][]call{}} }

// Unsure says why the reads answer for nothing; empty when they may be asked again.
func (r *Reads) Unsure() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unsure
}

// add records a call the provider at address answered.
func (r *Reads) add(address, method string, req, resp []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[address] = append(r.calls[address], call{method: method, req: req, resp: resp})
}

// doubt marks the reads unsure because of method.
func (r *Reads) doubt(method string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unsure == "" {
		r.unsure = "the run called " + path.Base(method)
	}
}

// readMethods are the calls whose answers are what a provider found: they are recorded.
var readMethods = map[string]bool{"ReadResource": true, "ReadDataSource": true}

// quietMethods are the calls whose answers follow from the configuration, the state
// and the reads alone, or change nothing: a run that made only these and reads may be
// answered again by its reads.
var quietMethods = map[string]bool{
	"GetSchema": true, "GetProviderSchema": true, "GetMetadata": true, "GetFunctions": true, "CallFunction": true,
	"GetResourceIdentitySchemas": true, "UpgradeResourceIdentity": true,
	"PrepareProviderConfig": true, "ValidateProviderConfig": true,
	"ValidateResourceTypeConfig": true, "ValidateResourceConfig": true,
	"ValidateDataSourceConfig": true, "ValidateDataResourceConfig": true,
	"UpgradeResourceState": true, "PlanResourceChange": true,
	"Stop": true, "StopProvider": true, "Shutdown": true,
	"StartStream": true, "StreamStdio": true, // the plugin protocol's broker and output
}

// recorder is a provider process that can serve one run on a socket of its own,
// recording its reads, and ask its provider those reads again.
type recorder interface {
	serveRecorded(socket, address string, r *Reads) (stop func(), err error)
	askAgain(ctx context.Context, calls []call) (same bool, err error)
}

// Record has terraform reach the lease's processes, for one run, through sockets of
// their own, where r records what the run reads; restore ends that and gives the lease
// its own sockets back.
func (l *Lease) Record(r *Reads) (restore func(), err error) {
	return l.serveOwn("r", func(proc *process, address, socket string) (func(), error) {
		rp, ok := proc.handle.(recorder)
		if !ok {
			return nil, errors.New("a provider process that cannot record a run's reads")
		}
		return rp.serveRecorded(socket, address, r)
	})
}

// Reread asks the lease's providers the reads r recorded again, each provider
// configured as it was for them first: same is true when every answer is the one
// recorded, and the lease's providers are those that answered them.
func (l *Lease) Reread(ctx context.Context, r *Reads) (same bool, err error) {
	if r.Unsure() != "" {
		return false, nil
	}
	r.mu.Lock()
	recorded := r.calls
	r.mu.Unlock()
	var addresses []string
	if l != nil {
		addresses = l.addresses
	}
	for address := range recorded {
		if !slices.Contains(addresses, address) {
			return false, nil // a provider this lease does not have
		}
	}
	if l == nil {
		return true, nil // no provider, and none was asked anything
	}
	for i, proc := range l.procs {
		rp, ok := proc.handle.(recorder)
		if !ok {
			return false, errors.New("a provider process that cannot read again")
		}
		if same, err := rp.askAgain(ctx, recorded[addresses[i]]); !same || err != nil {
			return false, err
		}
	}
	return true, nil
}

// serveRecorded serves one run on socket as the proxy serves every run, recording in r
// the reads and configure calls of the provider at address; any call but those and the
// quiet ones makes r unsure.
func (p *proxy) serveRecorded(socket, address string, r *Reads) (func(), error) {
	handler := func(srv any, in grpc.ServerStream) error {
		method, ok := grpc.MethodFromServerStream(in)
		if !ok {
			return status.Error(codes.Internal, "no method")
		}
		name := path.Base(method)
		switch {
		case configureMethods[method]:
			return answerRecorded(in, method, p.configureUnary, func(req, resp []byte) { r.add(address, method, req, resp) })
		case readMethods[name]:
			return answerRecorded(in, method, p.relayUnary, func(req, resp []byte) { r.add(address, method, req, resp) })
		case !quietMethods[name] && method != shutdownMethod:
			r.doubt(method)
		}
		return p.forward(srv, in)
	}
	return p.serveOn(socket, handler)
}

// answerRecorded answers one unary call with answer, and has record see its request and
// answer first.
func answerRecorded(in grpc.ServerStream, method string, answer func(grpc.ServerStream, string) ([]byte, []byte, error), record func(req, resp []byte)) error {
	req, resp, err := answer(in, method)
	if err != nil {
		return err
	}
	record(req, resp)
	return in.SendMsg(&resp)
}

// rereadParallelism is how many reads of one run are asked again at once, as many as
// terraform refreshes at once by default.
const rereadParallelism = 10

// askAgain asks the provider calls again, configure calls first and in order, then
// the reads at once: same is true when every answer is the one recorded.
func (p *proxy) askAgain(ctx context.Context, calls []call) (bool, error) {
	var reads []call
	for _, c := range calls {
		if !configureMethods[c.method] {
			reads = append(reads, c)
			continue
		}
		resp, err := p.configure(ctx, c.method, c.req)
		if err != nil {
			return false, fmt.Errorf("configure the provider again: %w", err)
		}
		if !bytes.Equal(resp, c.resp) {
			return false, nil
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var g errgroup.Group
	g.SetLimit(rereadParallelism)
	var differs atomic.Bool
	for _, c := range reads {
		g.Go(func() error {
			callCtx, done := p.calls.start(ctx)
			defer done()
			resp, err := p.invoke(callCtx, c.method, c.req)
			if err != nil {
				return fmt.Errorf("read again: %w", err)
			}
			if !bytes.Equal(resp, c.resp) {
				differs.Store(true)
				cancel() // one answer that differs is enough
			}
			return nil
		})
	}
	err := g.Wait()
	if differs.Load() {
		return false, nil
	}
	return err == nil, err
}
