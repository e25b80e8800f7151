package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// apiServer serves h on 127.0.0.1 as the cluster's API server would: with the
// certificate ensurePKI issues it, and only to clients with a certificate of the
// cluster's CA. The returned options address it and hold its PKI.
func apiServer(t *testing.T, h http.Handler) Options {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := testOptions(t)
	o.NodeIP, o.APIPort = "127.0.0.1", l.Addr().(*net.TCPAddr).Port
	if err := ensurePKI(o); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(o.pki("apiserver.crt"), o.pki("apiserver.key"))
	if err != nil {
		t.Fatal(err)
	}
	clients := x509.NewCertPool()
	clients.AddCert(readCert(t, o.pki("ca.crt")))
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: clients, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return o
}

// TestHealthClient: the client verifies the API server against the cluster's CA and
// presents the admin certificate it asks for; it accepts the self-signed certificates of
// other components' health endpoints, but not one on the API server's address.
func TestHealthClient(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	o := apiServer(t, ok)
	client, err := healthClient(o)
	if err != nil {
		t.Fatal(err)
	}
	get := func(c *http.Client, url string) error {
		resp, err := c.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return errors.New(resp.Status)
		}
		return nil
	}
	if err := get(client, o.APIServer()+"/readyz"); err != nil {
		t.Errorf("the API server: %v", err)
	}
	selfSigned := httptest.NewTLSServer(ok)
	defer selfSigned.Close()
	if err := get(client, selfSigned.URL+"/healthz"); err != nil {
		t.Errorf("a self-signed health endpoint: %v", err)
	}
	impostor := o
	impostor.APIPort = selfSigned.Listener.Addr().(*net.TCPAddr).Port
	client, err = healthClient(impostor)
	if err != nil {
		t.Fatal(err)
	}
	if err := get(client, impostor.APIServer()+"/readyz"); err == nil {
		t.Error("a certificate not of the cluster's CA was accepted on the API server's address")
	}
	if _, err := healthClient(Options{Dir: t.TempDir()}); err == nil {
		t.Error("healthClient without a PKI: no error")
	}
}

// TestWaitHealthy: a component that answers 200 is healthy; one that does not, and whose
// process is gone, fails at once quoting the end of its log; one that runs is waited for
// until it answers, or until the context ends.
func TestWaitHealthy(t *testing.T) {
	var status atomic.Int32
	var calls atomic.Int32
	health := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(int(status.Load()))
	}))
	defer health.Close()
	o := testOptions(t)
	if err := ensurePKI(o); err != nil {
		t.Fatal(err)
	}
	cl := &Cluster{Options: o}
	etcd := component{name: "etcd", binary: fakeBinary(t, "etcd"), args: []string{"60"}, health: health.URL + "/health"}
	ctx := context.Background()

	status.Store(http.StatusOK)
	if err := cl.waitHealthy(ctx, etcd); err != nil {
		t.Errorf("a component answering 200: %v", err)
	}

	status.Store(http.StatusServiceUnavailable)
	if err := os.MkdirAll(o.path("logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.logFile("etcd"), []byte("starting\nfatal: data dir locked\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := cl.waitHealthy(ctx, etcd)
	if err == nil || !strings.Contains(err.Error(), "etcd exited") || !strings.Contains(err.Error(), "fatal: data dir locked") {
		t.Errorf("a component that is gone: %v, want its exit and the end of its log", err)
	}

	startFakeDaemon(t, o, etcd)
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if err := cl.waitHealthy(short, etcd); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a running component that never answers: %v, want the context's end", err)
	}

	calls.Store(0)
	go func() {
		for calls.Load() < 2 {
			time.Sleep(20 * time.Millisecond)
		}
		status.Store(http.StatusOK)
	}()
	if err := cl.waitHealthy(ctx, etcd); err != nil {
		t.Errorf("a running component that comes up: %v", err)
	}
	if calls.Load() < 3 {
		t.Errorf("healthy after %d checks, want it retried until it answered", calls.Load())
	}
}

// TestWaitNodeReady: the node is Ready only by a kubelet heartbeat no older than the
// start (to the second); a stale Ready is not believed, and the error says what the
// latest heartbeat reported, or that the node is not registered.
func TestWaitNodeReady(t *testing.T) {
	var mu sync.Mutex
	var node *corev1.Node
	o := apiServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path != "/api/v1/nodes/"+DefaultNodeName || node == nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(node)
	}))
	since := time.Now()
	ready := func(status corev1.ConditionStatus, heartbeat time.Time, reason, message string) *corev1.Node {
		return &corev1.Node{
			TypeMeta:   metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{Name: DefaultNodeName},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, LastHeartbeatTime: metav1.NewTime(heartbeat)},
				{Type: corev1.NodeReady, Status: status, LastHeartbeatTime: metav1.NewTime(heartbeat), Reason: reason, Message: message},
			}},
		}
	}
	for _, tc := range []struct {
		name    string
		node    *corev1.Node
		wantErr []string
	}{
		{name: "ready in the same second", node: ready(corev1.ConditionTrue, since.Truncate(time.Second), "KubeletReady", "")},
		{name: "ready later", node: ready(corev1.ConditionTrue, since.Add(2*time.Second), "KubeletReady", "")},
		{name: "not registered", wantErr: []string{"not Ready after", "not registered"}},
		{name: "ready before the start", node: ready(corev1.ConditionTrue, since.Add(-time.Hour), "KubeletReady", ""),
			wantErr: []string{"not registered"}},
		{name: "not ready", node: ready(corev1.ConditionFalse, since.Add(time.Second), "KubeletNotReady", "network plugin not ready"),
			wantErr: []string{"KubeletNotReady: network plugin not ready"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			node = tc.node
			mu.Unlock()
			err := waitNodeReady(context.Background(), o, since, 1200*time.Millisecond)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	mu.Lock()
	node = nil
	mu.Unlock()
	if err := waitNodeReady(ctx, o, since, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled wait: %v, want context.Canceled", err)
	}
}
