package plugins

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// proxyTo serves handler as a provider on a socket, and a proxy in front of it that asks
// stopping; dial connects a run to the proxy.
func proxyTo(t *testing.T, handler grpc.StreamHandler, stopping func() bool) (dial func() *grpc.ClientConn) {
	t.Helper()
	_, dial = newTestProxy(t, handler, stopping)
	return dial
}

// newTestProxy is proxyTo, returning the proxy too.
func newTestProxy(t *testing.T, handler grpc.StreamHandler, stopping func() bool) (*proxy, func() *grpc.ClientConn) {
	t.Helper()
	dir := t.TempDir()
	backend, err := net.Listen("unix", filepath.Join(dir, "provider.sock"))
	if err != nil {
		t.Fatal(err)
	}
	provider := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(handler))
	go func() { _ = provider.Serve(backend) }()
	t.Cleanup(provider.Stop)
	p, err := newProxy(filepath.Join(dir, "proxy.sock"), "unix", filepath.Join(dir, "provider.sock"), &pureCalls{binary: "bin", cache: &answers{}}, stopping)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	return p, func() *grpc.ClientConn {
		c, err := grpc.NewClient("unix://"+filepath.Join(dir, "proxy.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
}

// invoke makes one unary call through c.
func invoke(ctx context.Context, c *grpc.ClientConn, method, body string) (string, error) {
	req, resp := []byte(body), []byte(nil)
	err := c.Invoke(ctx, method, &req, &resp, grpc.ForceCodec(rawCodec{}))
	return string(resp), err
}

// TestForward: which calls of terraform the provider gets, and what terraform is answered.
func TestForward(t *testing.T) {
	const (
		apply    = "/tfplugin6.Provider/ApplyResourceChange"
		metadata = "/tfplugin6.Provider/GetMetadata"
		stop     = "/tfplugin6.Provider/StopProvider"
		stop5    = "/tfplugin5.Provider/Stop"
		fail     = "/tfplugin6.Provider/ReadResource"
	)
	type call struct{ method, body, want string }
	cases := []struct {
		name     string
		stopping bool // every run the process serves asked it to stop
		calls    []call
		asked    map[string]int // calls the provider got, by method
	}{{
		name:  "a call that is not pure is relayed every time",
		calls: []call{{apply, "x", "provider: x"}, {apply, "x", "provider: x"}},
		asked: map[string]int{apply: 2},
	}, {
		name:  "a pure call is asked once",
		calls: []call{{metadata, "", "provider: "}, {metadata, "", "provider: "}},
		asked: map[string]int{metadata: 1},
	}, {
		name:  "Shutdown never reaches the provider",
		calls: []call{{shutdownMethod, "", ""}},
		asked: map[string]int{},
	}, {
		name:  "a stop request is held back while other runs have not asked",
		calls: []call{{stop, "", ""}, {stop5, "", ""}},
		asked: map[string]int{},
	}, {
		name:     "a stop request goes on once every run has asked",
		stopping: true,
		calls:    []call{{stop, "", "provider: "}},
		asked:    map[string]int{stop: 1},
	}, {
		name:  "the provider's error reaches terraform",
		calls: []call{{fail, "x", "error NotFound"}},
		asked: map[string]int{fail: 1},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			asked := map[string]int{}
			dial := proxyTo(t, func(_ any, s grpc.ServerStream) error {
				method, _ := grpc.MethodFromServerStream(s)
				mu.Lock()
				asked[method]++
				mu.Unlock()
				var req []byte
				if err := s.RecvMsg(&req); err != nil {
					return err
				}
				if method == fail {
					return status.Error(codes.NotFound, "gone")
				}
				// a valid answer without diagnostics: field 1 holds the text
				resp := field1("provider: " + string(req))
				return s.SendMsg(&resp)
			}, func() bool { return tc.stopping })
			c := dial()
			for _, call := range tc.calls {
				got, err := invoke(context.Background(), c, call.method, call.body)
				if err != nil {
					got = "error " + status.Code(err).String()
				} else if got != "" {
					got = string(got[2:]) // field 1's tag and length
				}
				if got != call.want {
					t.Errorf("%s answered %q, want %q", call.method, got, call.want)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(tc.asked, asked); diff != "" {
				t.Errorf("calls the provider got (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStopEndsOnlyThatRunsCalls: a run that asks a shared provider to stop, while other
// runs still use it, has its own calls in flight cancelled at the provider; the other
// runs' calls go on.
func TestStopEndsOnlyThatRunsCalls(t *testing.T) {
	cancelled := make(chan string, 4)
	dial := proxyTo(t, func(_ any, s grpc.ServerStream) error {
		var req []byte
		if err := s.RecvMsg(&req); err != nil {
			return err
		}
		<-s.Context().Done() // a long create, until cancelled
		cancelled <- string(req)
		return s.Context().Err()
	}, func() bool { return false }) // another run still uses the process
	call := func(c *grpc.ClientConn, method, body string) chan error {
		errs := make(chan error, 1)
		go func() {
			_, err := invoke(context.Background(), c, method, body)
			errs <- err
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

// TestConcurrentRunsAskOnce: runs that make the same pure call while the provider
// answers it (ten cold runs validating one provider configuration) wait for that answer;
// the provider is asked once.
func TestConcurrentRunsAskOnce(t *testing.T) {
	const validate, runs = "/tfplugin5.Provider/PrepareProviderConfig", 10
	var asked atomic.Int32
	dial := proxyTo(t, func(_ any, s grpc.ServerStream) error {
		asked.Add(1)
		var req []byte
		if err := s.RecvMsg(&req); err != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond) // the aws provider takes seconds
		resp := field1("valid")
		return s.SendMsg(&resp)
	}, nil)
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for range runs {
		c := dial() // each terraform run dials its own connection
		wg.Go(func() {
			got, err := invoke(context.Background(), c, validate, "config")
			if err == nil && got != string(field1("valid")) {
				err = fmt.Errorf("answered %q", got)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := asked.Load(); got != 1 {
		t.Errorf("the provider was asked %d times, want once", got)
	}
}

// TestSchemaAskedOnStart: a started process is asked for its schema at once, in the
// method of its protocol; a run that asks while the answer is on its way waits for it,
// and the provider is asked once.
func TestSchemaAskedOnStart(t *testing.T) {
	for _, tc := range []struct {
		protocol int
		method   string
	}{{5, "/tfplugin5.Provider/GetSchema"}, {6, "/tfplugin6.Provider/GetProviderSchema"}} {
		t.Run(tc.method, func(t *testing.T) {
			var asked atomic.Int32
			answering := make(chan struct{}, 1)
			p, dial := newTestProxy(t, func(_ any, s grpc.ServerStream) error {
				method, _ := grpc.MethodFromServerStream(s)
				var req []byte
				if err := s.RecvMsg(&req); err != nil {
					return err
				}
				if method != tc.method || len(req) != 0 {
					return status.Errorf(codes.Unimplemented, "asked %s with %q", method, req)
				}
				asked.Add(1)
				answering <- struct{}{}
				time.Sleep(300 * time.Millisecond) // a large provider takes a second or more
				resp := field1("schema")
				return s.SendMsg(&resp)
			}, nil)
			go p.prefetchSchema(tc.protocol)
			<-answering
			got, err := invoke(context.Background(), dial(), tc.method, "")
			if err != nil || got != string(field1("schema")) {
				t.Fatalf("the run was answered %q, %v", got, err)
			}
			if n := asked.Load(); n != 1 {
				t.Fatalf("the provider was asked for its schema %d times, want once", n)
			}
		})
	}
}

// TestConfigureOncePerConfiguration: runs that configure a process alike, one after
// the other or at once, configure the provider once; a different configuration goes
// to the provider, and so does the earlier one after it; an answer with diagnostics is
// never repeated to the next run.
func TestConfigureOncePerConfiguration(t *testing.T) {
	const configure = "/tfplugin5.Provider/Configure"
	var mu sync.Mutex
	var got []string // the configurations the provider was given
	dial := proxyTo(t, func(_ any, s grpc.ServerStream) error {
		var req []byte
		if err := s.RecvMsg(&req); err != nil {
			return err
		}
		mu.Lock()
		got = append(got, string(req))
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		resp := []byte{}
		if string(req) == "bad" {
			resp = field1("diagnostic")
		}
		return s.SendMsg(&resp)
	}, nil)
	ctx := context.Background()
	step := func(configs ...string) {
		t.Helper()
		var wg sync.WaitGroup
		for _, cfg := range configs {
			c := dial() // a run each
			wg.Go(func() {
				if _, err := invoke(ctx, c, configure, cfg); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	step("a")      // a plan
	step("a", "a") // an apply's two, and another run's at once
	step("b")      // another configuration
	step("a")      // back to the first
	step("bad", "bad")
	want := []string{"a", "b", "a", "bad", "bad"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("configurations the provider was given (-want +got):\n%s", diff)
	}
}
