package plugins

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protowire"
)

func TestHasField(t *testing.T) {
	var msg []byte
	msg = protowire.AppendTag(msg, 1, protowire.BytesType)
	msg = protowire.AppendBytes(msg, []byte("prepared config"))
	if hasField(msg, 2) {
		t.Error("an answer without diagnostics reads as having them: it would never be cached")
	}
	withDiag := protowire.AppendTag(append([]byte(nil), msg...), 2, protowire.BytesType)
	withDiag = protowire.AppendBytes(withDiag, []byte("diagnostic"))
	if !hasField(withDiag, 2) {
		t.Error("an answer with diagnostics reads as clean: a problem would be replayed from the cache")
	}
	if !hasField([]byte{0xff}, 2) {
		t.Error("an unreadable answer must count as having diagnostics")
	}
	if hasField(nil, 4) {
		t.Error("an empty answer has no diagnostics")
	}
}

// TestStopEndsOnlyThatRunsCalls: a run that asks a shared provider to stop, while other
// runs still use it, has its own calls in flight cancelled at the provider; the other
// runs' calls go on.
func TestStopEndsOnlyThatRunsCalls(t *testing.T) {
	dir := t.TempDir()
	backend, err := net.Listen("unix", filepath.Join(dir, "provider.sock"))
	if err != nil {
		t.Fatal(err)
	}
	cancelled := make(chan string, 4)
	provider := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, s grpc.ServerStream) error {
		var req []byte
		if err := s.RecvMsg(&req); err != nil {
			return err
		}
		<-s.Context().Done() // a long create, until cancelled
		cancelled <- string(req)
		return s.Context().Err()
	}))
	go func() { _ = provider.Serve(backend) }()
	defer provider.Stop()
	stopping := func() bool { return false } // another run still uses the process
	p, err := newProxy(filepath.Join(dir, "proxy.sock"), "unix", filepath.Join(dir, "provider.sock"), &pureCalls{binary: "bin", cache: &answers{}}, stopping)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()

	dial := func() *grpc.ClientConn {
		c, err := grpc.NewClient("unix://"+filepath.Join(dir, "proxy.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	call := func(c *grpc.ClientConn, method, body string) chan error {
		errs := make(chan error, 1)
		go func() {
			req, resp := []byte(body), []byte(nil)
			errs <- c.Invoke(context.Background(), method, &req, &resp, grpc.ForceCodec(rawCodec{}))
		}()
		return errs
	}
	interrupted, other := dial(), dial()
	call(interrupted, "/tfplugin6.Provider/ApplyResourceChange", "interrupted run")
	otherErr := call(other, "/tfplugin6.Provider/ApplyResourceChange", "other run")
	time.Sleep(200 * time.Millisecond) // both calls reach the provider
	if err := <-call(interrupted, "/tfplugin6.Provider/StopProvider", ""); err != nil {
		t.Fatalf("stop: %v", err)
	}
	select {
	case got := <-cancelled:
		if got != "interrupted run" {
			t.Fatalf("the provider cancelled the call of %q, want the interrupted run's", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the interrupted run's call goes on at the provider")
	}
	select {
	case got := <-cancelled:
		t.Fatalf("the call of %q was cancelled too", got)
	case err := <-otherErr:
		t.Fatalf("the other run's call ended: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
}
