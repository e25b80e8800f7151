package plugins

import (
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"
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

// proxy serves terraform on a socket of its own and forwards every call to one provider
// process, answering pure calls from the cache.
type proxy struct {
	binary string
	cache  *answers
	// types are the resource and data source types terraform is told of; nil means all.
	types map[string]bool
	// stopping is asked whether a run's stop request goes on to the provider.
	stopping func() bool

	trimMu  sync.Mutex
	trimmed []byte // the schema answer, trimmed to types
	calls   inFlight
	conn    *grpc.ClientConn
	server  *grpc.Server
	lis     net.Listener
}

// newProxy listens on socket and forwards to the provider listening at target
// (network "unix" or "tcp").
func newProxy(socket, network, target, binary string, cache *answers, types map[string]bool) (*proxy, error) {
	if network == "unix" {
		target = "unix://" + target
	}
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30), grpc.MaxCallSendMsgSize(1<<30)))
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("unix", socket)
	if err != nil {
		conn.Close()
		return nil, err
	}
	p := &proxy{binary: binary, cache: cache, conn: conn, lis: lis, types: types}
	p.server = grpc.NewServer(grpc.UnknownServiceHandler(p.forward), grpc.ForceServerCodec(rawCodec{}), grpc.StatsHandler(&connTagger{}),
		grpc.MaxRecvMsgSize(1<<30), grpc.MaxSendMsgSize(1<<30))
	go func() { _ = p.server.Serve(lis) }()
	return p, nil
}

// close stops serving and drops the connection to the provider.
func (p *proxy) close() {
	p.server.Stop()
	p.conn.Close()
}

// forward relays one call (unary or streaming) to the provider.
func (p *proxy) forward(_ any, in grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(in)
	if !ok {
		return status.Error(codes.Internal, "no method")
	}
	if method == shutdownMethod || stopMethods[method] && p.stopping != nil && !p.stopping() {
		if method != shutdownMethod {
			// The process serves other runs too: end only this run's calls, as the
			// provider would have ended them all.
			p.calls.cancel(in.Context())
		}
		var req []byte
		_ = in.RecvMsg(&req)
		empty := []byte{} // Shutdown's and Stop's answers: nothing, or no error
		return in.SendMsg(&empty)
	}
	if diagnostics, ok := pureMethods[method]; ok {
		return p.pure(in, method, diagnostics)
	}
	ctx, done := p.calls.start(in.Context())
	defer done()
	out, err := p.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return err
	}
	up := make(chan error, 1)
	go func() {
		for {
			var msg []byte
			if err := in.RecvMsg(&msg); err != nil {
				if errors.Is(err, io.EOF) {
					up <- out.CloseSend()
				} else {
					up <- err
				}
				return
			}
			if err := out.SendMsg(&msg); err != nil {
				up <- err
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

// pure answers a pure unary call from the cache, asking the provider the first time.
func (p *proxy) pure(in grpc.ServerStream, method string, diagnostics protowire.Number) error {
	var req []byte
	if err := in.RecvMsg(&req); err != nil {
		return err
	}
	k := p.cache.key(p.binary, method, req)
	resp, ok := p.cache.get(k)
	if !ok {
		if err := p.conn.Invoke(in.Context(), method, &req, &resp, grpc.ForceCodec(rawCodec{})); err != nil {
			return err
		}
		if hasField(resp, diagnostics) {
			return in.SendMsg(&resp)
		}
		p.cache.put(k, resp)
	}
	if schemaMethods[method] && p.types != nil {
		trimmed, err := p.trim(resp)
		if err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		return in.SendMsg(&trimmed)
	}
	return in.SendMsg(&resp)
}

// trim is the schema answer resp trimmed to the proxy's types, worked out once.
func (p *proxy) trim(resp []byte) ([]byte, error) {
	p.trimMu.Lock()
	defer p.trimMu.Unlock()
	if p.trimmed == nil {
		trimmed, err := trimSchema(resp, p.types)
		if err != nil {
			return nil, err
		}
		p.trimmed = trimmed
	}
	return p.trimmed, nil
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
