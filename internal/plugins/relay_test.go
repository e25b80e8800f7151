package plugins

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// terraformSide is the stream a call from terraform arrives on: it sends up, then
// upEnd; it records what it is answered.
type terraformSide struct {
	up      []string
	upEnd   error
	sendErr error
	ended   chan struct{} // closed once up and upEnd have been read

	mu      sync.Mutex
	got     []string
	header  metadata.MD
	trailer metadata.MD
}

func (s *terraformSide) RecvMsg(m any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.up) == 0 {
		close(s.ended)
		return s.upEnd
	}
	*(m.(*[]byte)) = []byte(s.up[0])
	s.up = s.up[1:]
	return nil
}
func (s *terraformSide) SendMsg(m any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sendErr != nil {
		return s.sendErr
	}
	s.got = append(s.got, string(*(m.(*[]byte))))
	return nil
}
func (s *terraformSide) SendHeader(md metadata.MD) error { s.header = md; return nil }
func (s *terraformSide) SetHeader(metadata.MD) error     { return nil }
func (s *terraformSide) SetTrailer(md metadata.MD)       { s.trailer = md }
func (s *terraformSide) Context() context.Context        { return context.Background() }

// providerSide is the provider's end of a relayed call: it answers down, then downEnd,
// once until is closed.
type providerSide struct {
	header    metadata.MD
	headerErr error
	down      []string
	downEnd   error
	trailer   metadata.MD
	until     <-chan struct{}

	mu     sync.Mutex
	got    []string
	closed chan struct{} // closed by CloseSend
}

func (p *providerSide) RecvMsg(m any) error {
	if len(p.down) == 0 {
		<-p.until
		return p.downEnd
	}
	*(m.(*[]byte)) = []byte(p.down[0])
	p.down = p.down[1:]
	return nil
}
func (p *providerSide) SendMsg(m any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, string(*(m.(*[]byte))))
	return nil
}
func (p *providerSide) CloseSend() error             { close(p.closed); return nil }
func (p *providerSide) Header() (metadata.MD, error) { return p.header, p.headerErr }
func (p *providerSide) Trailer() metadata.MD         { return p.trailer }
func (p *providerSide) Context() context.Context     { return context.Background() }
func (p *providerSide) sent() []string               { p.mu.Lock(); defer p.mu.Unlock(); return p.got }
func (p *providerSide) sendClosed() bool {
	select {
	case <-p.closed:
		return true
	default:
		return false
	}
}

// TestRelay: a relayed call carries terraform's messages and the end of its sending to
// the provider, and the provider's header, messages, trailer and error back.
func TestRelay(t *testing.T) {
	broken := errors.New("connection reset")
	unavailable := status.Error(codes.Unavailable, "provider crashed")
	header, trailer := metadata.Pairs("h", "1"), metadata.Pairs("t", "2")
	cases := []struct {
		name        string
		up          []string
		upEnd       error
		sendErr     error // terraform cannot be answered
		headerErr   error
		down        []string
		downEnd     error
		afterUpEnds bool // the provider ends the call once terraform's sending ended, not once it closed
		wantUp      []string
		wantClosed  bool
		wantDown    []string
		wantHeader  metadata.MD
		wantErr     error
	}{{
		name: "unary", up: []string{"req"}, upEnd: io.EOF, down: []string{"resp"}, downEnd: io.EOF,
		wantUp: []string{"req"}, wantClosed: true, wantDown: []string{"resp"}, wantHeader: header,
	}, {
		name: "the provider streams", up: []string{"req"}, upEnd: io.EOF, down: []string{"a", "b", "c"}, downEnd: io.EOF,
		wantUp: []string{"req"}, wantClosed: true, wantDown: []string{"a", "b", "c"}, wantHeader: header,
	}, {
		name: "terraform streams", up: []string{"a", "b"}, upEnd: io.EOF, down: []string{"sum"}, downEnd: io.EOF,
		wantUp: []string{"a", "b"}, wantClosed: true, wantDown: []string{"sum"}, wantHeader: header,
	}, {
		name: "the provider's error ends the call", up: []string{"req"}, upEnd: io.EOF, down: []string{"partial"}, downEnd: unavailable,
		wantUp: []string{"req"}, wantClosed: true, wantDown: []string{"partial"}, wantHeader: header, wantErr: unavailable,
	}, {
		name: "no header when the provider gave none", up: []string{"req"}, upEnd: io.EOF, headerErr: unavailable, downEnd: unavailable,
		wantUp: []string{"req"}, wantClosed: true, wantErr: unavailable,
	}, {
		name: "terraform's stream breaks: the provider's sending is not ended for it", up: []string{"a"}, upEnd: broken,
		down: []string{"resp"}, downEnd: io.EOF, afterUpEnds: true,
		wantUp: []string{"a"}, wantDown: []string{"resp"}, wantHeader: header,
	}, {
		name: "terraform cannot be answered", up: []string{"req"}, upEnd: io.EOF, sendErr: broken, down: []string{"resp"}, downEnd: io.EOF,
		wantUp: []string{"req"}, wantClosed: true, wantHeader: header, wantErr: broken,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := &terraformSide{up: tc.up, upEnd: tc.upEnd, sendErr: tc.sendErr, ended: make(chan struct{})}
			out := &providerSide{header: header, headerErr: tc.headerErr, down: tc.down, downEnd: tc.downEnd, trailer: trailer,
				closed: make(chan struct{})}
			out.until = out.closed
			if tc.afterUpEnds {
				out.until = in.ended
			}
			err := relay(in, out)
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("relay: %v, want %v", err, tc.wantErr)
			}
			<-in.ended
			if diff := cmp.Diff(tc.wantUp, out.sent()); diff != "" {
				t.Errorf("the provider got (-want +got):\n%s", diff)
			}
			if tc.wantClosed {
				select {
				case <-out.closed:
				case <-time.After(5 * time.Second):
					t.Error("terraform's sending ended, and the provider was not told")
				}
			} else if out.sendClosed() {
				t.Error("the provider was told terraform's sending ended, and it broke")
			}
			in.mu.Lock()
			defer in.mu.Unlock()
			if diff := cmp.Diff(tc.wantDown, in.got); diff != "" {
				t.Errorf("terraform got (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantHeader, in.header); diff != "" {
				t.Errorf("terraform's header (-want +got):\n%s", diff)
			}
			if tc.sendErr == nil && tc.headerErr == nil && !cmp.Equal(trailer, in.trailer) {
				t.Errorf("terraform's trailer is %v, want the provider's %v", in.trailer, trailer)
			}
		})
	}
}
