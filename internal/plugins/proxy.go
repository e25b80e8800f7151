package plugins

import (
	"context"
	"errors"
	"io"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
)

// shutdownMethod would stop the shared process: the pool alone decides that.
const shutdownMethod = "/plugin.GRPCController/Shutdown"

// stopMethods ask the provider to cancel the calls in flight, those of every run it
// serves: the pool decides whether the provider gets the request.
var stopMethods = map[string]bool{"/tfplugin5.Provider/Stop": true, "/tfplugin6.Provider/StopProvider": true}

// rawCodec passes messages through as bytes.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

var _ encoding.Codec = rawCodec{}

// proxy serves terraform on a socket of its own and forwards every call to one provider
// process: pure calls are answered by pure, the others relayed.
type proxy struct {
	pure *pureCalls
	// configured is what the provider was last configured with.
	configured *configuration
	// stopping is asked whether a run's stop request goes on to the provider.
	stopping func() bool

	calls  inFlight
	conn   *grpc.ClientConn
	tagger *connTagger
	stop   func() // stops serving on the process's socket
}

// newProxy listens on socket and forwards to the provider listening at target
// (network "unix" or "tcp"); stopping nil passes every stop request on.
func newProxy(socket, network, target string, pure *pureCalls, stopping func() bool) (*proxy, error) {
	if network == "unix" {
		target = "unix://" + target
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30), grpc.MaxCallSendMsgSize(1<<30)))
	if err != nil {
		return nil, err
	}
	if stopping == nil {
		stopping = func() bool { return true }
	}
	p := &proxy{pure: pure, configured: newConfiguration(), stopping: stopping, conn: conn, tagger: &connTagger{}}
	stop, err := p.serveOn(socket, p.forward)
	if err != nil {
		conn.Close()
		return nil, err
	}
	p.stop = stop
	return p, nil
}

// serveOn serves terraform's calls on socket with handler until stop is called. Every
// socket's connections are numbered apart (tagger), so that a run's calls are its own.
func (p *proxy) serveOn(socket string, handler grpc.StreamHandler) (stop func(), err error) {
	lis, err := net.Listen("unix", socket)
	if err != nil {
		return nil, err
	}
	server := grpc.NewServer(grpc.UnknownServiceHandler(handler), grpc.ForceServerCodec(rawCodec{}), grpc.StatsHandler(p.tagger),
		grpc.MaxRecvMsgSize(1<<30), grpc.MaxSendMsgSize(1<<30))
	go func() { _ = server.Serve(lis) }()
	return server.Stop, nil
}

// close stops serving and drops the connection to the provider.
func (p *proxy) close() {
	p.stop()
	p.conn.Close()
}

// forward serves one call from terraform: a shutdown, or a stop request the pool holds
// back, is answered here; a pure call from the cache; a repeated configure from the
// process's last; any other is relayed.
func (p *proxy) forward(_ any, in grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(in)
	if !ok {
		return status.Error(codes.Internal, "no method")
	}
	switch {
	case method == shutdownMethod:
		return swallow(in)
	case stopMethods[method] && !p.stopping():
		// The process serves other runs too: end only this run's calls, as the
		// provider would have ended them all.
		p.calls.cancel(in.Context())
		return swallow(in)
	case isPure(method):
		return p.answerPure(in, method)
	case configureMethods[method]:
		return p.answerConfigure(in, method)
	}
	ctx, done := p.calls.start(in.Context())
	defer done()
	out, err := p.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return err
	}
	return relay(in, out)
}

// swallow answers a call the provider must not get with an empty answer: Shutdown's and
// Stop's answers mean nothing, or no error.
func swallow(in grpc.ServerStream) error {
	var req []byte
	_ = in.RecvMsg(&req)
	empty := []byte{}
	return in.SendMsg(&empty)
}

// answerPure answers a pure unary call through the cache of pure calls.
func (p *proxy) answerPure(in grpc.ServerStream, method string) error {
	var req []byte
	if err := in.RecvMsg(&req); err != nil {
		return err
	}
	resp, err := p.pure.answer(in.Context(), method, req, func() ([]byte, error) { return p.invoke(in.Context(), method, req) })
	if err != nil {
		if _, ok := status.FromError(err); !ok { // not the provider's: a schema it cannot trim
			err = status.Error(codes.Internal, err.Error())
		}
		return err
	}
	return in.SendMsg(&resp)
}

// answerConfigure answers a configure call: a repeat of the process's last
// configuration from its answer, any other by the provider.
func (p *proxy) answerConfigure(in grpc.ServerStream, method string) error {
	_, resp, err := p.configureUnary(in, method)
	if err != nil {
		return err
	}
	return in.SendMsg(&resp)
}

// configureUnary answers one configure call as answerConfigure does, and returns its
// request and answer; the answer is the caller's to send.
func (p *proxy) configureUnary(in grpc.ServerStream, method string) (req, resp []byte, err error) {
	if err := in.RecvMsg(&req); err != nil {
		return nil, nil, err
	}
	resp, err = p.configure(in.Context(), method, req)
	return req, resp, err
}

// configure answers the configure request req: a repeat of the process's last
// configuration from its answer, any other by the provider.
func (p *proxy) configure(ctx context.Context, method string, req []byte) ([]byte, error) {
	ctx, done := p.calls.start(ctx)
	defer done()
	return p.configured.answer(ctx, req, func() ([]byte, error) { return p.invoke(ctx, method, req) })
}

// invoke asks the provider a unary call, req and its answer as they go on the wire.
func (p *proxy) invoke(ctx context.Context, method string, req []byte) ([]byte, error) {
	var resp []byte
	err := p.conn.Invoke(ctx, method, &req, &resp, grpc.ForceCodec(rawCodec{}))
	return resp, err
}

// prefetchSchema asks the provider for its schema as soon as it serves: every run asks
// for it first, and for a large provider the answer takes about as long as an init, so
// a process started while its run's init runs has it ready. A run that asks meanwhile
// waits for this answer rather than ask again.
func (p *proxy) prefetchSchema(protocol int) {
	method := schemaMethod(protocol)
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	req := []byte{} // GetSchema and GetProviderSchema requests have no fields
	_, _ = p.pure.answer(ctx, method, req, func() ([]byte, error) { return p.invoke(ctx, method, req) })
}

// relay streams one call between terraform (in) and the provider (out) until the
// provider ends it: terraform's messages up, then the end of its sending; the
// provider's header, messages and trailer down. The provider's error ends the call.
func relay(in grpc.ServerStream, out grpc.ClientStream) error {
	go func() {
		for {
			var msg []byte
			if err := in.RecvMsg(&msg); err != nil {
				if errors.Is(err, io.EOF) {
					_ = out.CloseSend()
				}
				return
			}
			if err := out.SendMsg(&msg); err != nil {
				return
			}
		}
	}()
	if md, err := out.Header(); err == nil {
		_ = in.SendHeader(md)
	}
	for {
		var msg []byte
		if err := out.RecvMsg(&msg); err != nil {
			in.SetTrailer(out.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := in.SendMsg(&msg); err != nil {
			return err
		}
	}
}
