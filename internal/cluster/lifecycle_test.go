package cluster

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeBinary links name in a temporary directory to sleep, so that a process started
// from it runs a binary of that name, as a component's does.
func fakeBinary(t *testing.T, name string) string {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.Symlink(sleep, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// startFakeDaemon starts c (a fakeBinary) as a component is started, fails unless it is
// then found running, and stops it when the test ends.
func startFakeDaemon(t *testing.T, o Options, c component) {
	t.Helper()
	if err := startDaemon(o, c); err != nil {
		t.Fatal(err)
	}
	pid := waitRunning(t, o, c)
	t.Cleanup(func() { _ = stopProcess(pid, time.Second) })
}

// waitRunning waits for a component just started to show as running: for a moment after
// its start, while the kernel has not yet set up its arguments, /proc shows none.
func waitRunning(t *testing.T, o Options, c component) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if pid := running(o, c); pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: started, but its pid file names no process of %s", c.name, c.binary)
		}
	}
}

// TestDaemonLifecycle: a started component runs in its own session with its process id
// recorded and its output logged; running finds it by its pid file and binary; stopping
// it ends it, after which it no longer runs.
func TestDaemonLifecycle(t *testing.T) {
	o := Options{Dir: t.TempDir()}
	c := component{name: "etcd", binary: fakeBinary(t, "etcd"), args: []string{"60"}}
	if err := startDaemon(o, c); err != nil {
		t.Fatal(err)
	}
	pid := waitRunning(t, o, c)
	t.Cleanup(func() { _ = stopProcess(pid, time.Second) })
	if log, err := os.ReadFile(o.logFile("etcd")); err != nil || !strings.Contains(string(log), "---- etcd started") {
		t.Errorf("log = %q, %v; want the start recorded", log, err)
	}
	if other := (component{name: "etcd", binary: "kube-apiserver"}); running(o, other) != 0 {
		t.Error("a pid file naming a process of another binary counts as running")
	}
	if err := stopProcess(pid, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if running(o, c) != 0 {
		t.Error("a stopped component still runs")
	}
}

// TestStartDaemonRefuses: a component whose binary is not there is not started, and the
// error names it.
func TestStartDaemonRefuses(t *testing.T) {
	o := Options{Dir: t.TempDir()}
	err := startDaemon(o, component{name: "kubelet", binary: filepath.Join(o.Dir, "no-such-kubelet")})
	if err == nil || !strings.Contains(err.Error(), "kubelet") {
		t.Fatalf("startDaemon = %v, want an error naming kubelet", err)
	}
	if _, err := os.Stat(o.pidFile("kubelet")); err == nil {
		t.Error("a pid file was written for a component that did not start")
	}
}

// TestRunningPidFiles: only a pid file naming a live process of the component's binary
// counts.
func TestRunningPidFiles(t *testing.T) {
	o := Options{Dir: t.TempDir()}
	if err := os.MkdirAll(o.path("run"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := component{name: "etcd", binary: "etcd"}
	for name, content := range map[string]string{
		"not a number":        "etcd\n",
		"zero":                "0\n",
		"negative":            "-4\n",
		"this test, not etcd": strconv.Itoa(os.Getpid()) + "\n",
		"a pid never used":    "4194304\n",
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(o.pidFile("etcd"), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if pid := running(o, c); pid != 0 {
				t.Errorf("running = %d, want 0", pid)
			}
		})
	}
	if err := os.Remove(o.pidFile("etcd")); err != nil {
		t.Fatal(err)
	}
	if pid := running(o, c); pid != 0 {
		t.Errorf("running without a pid file = %d, want 0", pid)
	}
}

// TestRunningComponents: a cluster with no component running is down; one with some
// running and some not is an error naming those down and where their logs are.
func TestRunningComponents(t *testing.T) {
	o := Options{Dir: t.TempDir(), Bin: t.TempDir(), NodeIP: "10.254.0.1", APIPort: 6443}
	cl := &Cluster{Options: o}
	up, err := cl.runningComponents()
	if up || err != nil {
		t.Fatalf("nothing started: runningComponents = %v, %v; want false, nil", up, err)
	}
	etcd := fakeBinary(t, "etcd")
	if err := os.Symlink(etcd, filepath.Join(o.Bin, "etcd")); err != nil {
		t.Fatal(err)
	}
	c := cl.component("etcd")
	c.args = []string{"60"}
	startFakeDaemon(t, o, c)
	up, err = cl.runningComponents()
	if up || err == nil || !strings.Contains(err.Error(), "kube-apiserver") || !strings.Contains(err.Error(), o.path("logs")) {
		t.Fatalf("etcd alone: runningComponents = %v, %v; want an error naming the components down and the logs", up, err)
	}
}

// TestComponents: the daemons start in dependency order, each with its health URL on the
// node's address, and their files under the cluster's directory.
func TestComponents(t *testing.T) {
	o := Options{Dir: "/c", Bin: "/bin-dir", NodeIP: "10.254.0.1", APIPort: 6443, NodeName: "node", ServiceCIDR: "10.96.0.0/16"}
	var names, health []string
	for _, c := range components(o) {
		names = append(names, c.name)
		health = append(health, c.health)
		if c.name != "containerd" && filepath.Dir(c.binary) != "/bin-dir" {
			t.Errorf("%s runs %s, not a binary of o.Bin", c.name, c.binary)
		}
		for _, a := range c.args {
			if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "/c/") {
				t.Errorf("%s: %s points outside the cluster's directory", c.name, a)
			}
		}
	}
	if diff := cmp.Diff([]string{"containerd", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy"}, names); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	want := []string{"", "http://10.254.0.1:2379/health", "https://10.254.0.1:6443/readyz", "https://10.254.0.1:10257/healthz",
		"https://10.254.0.1:10259/healthz", "http://10.254.0.1:10248/healthz", "http://10.254.0.1:10256/healthz"}
	if diff := cmp.Diff(want, health); diff != "" {
		t.Errorf("health URLs (-want +got):\n%s", diff)
	}
	cl := &Cluster{Options: o}
	if got := cl.component("kubelet"); got.name != "kubelet" {
		t.Errorf("component(kubelet) = %q", got.name)
	}
	defer func() {
		if recover() == nil {
			t.Error("component of an unknown name did not panic")
		}
	}()
	cl.component("kube-dns")
}

// TestCheckAddressFree: a local address something already serves is refused, naming the
// way out; a free one, or one of no interface of this machine, is not.
func TestCheckAddressFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := l.Addr().(*net.TCPAddr).Port
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unused := free.Addr().(*net.TCPAddr).Port
	free.Close()
	defer l.Close()
	for _, tc := range []struct {
		name    string
		ip      string
		port    int
		refused bool
	}{
		{"served here", "127.0.0.1", served, true},
		{"free here", "127.0.0.1", unused, false},
		{"not an address of this machine", "192.0.2.1", served, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkAddressFree(Options{NodeIP: tc.ip, APIPort: tc.port})
			if (err != nil) != tc.refused {
				t.Fatalf("checkAddressFree = %v, want refused %v", err, tc.refused)
			}
			if err != nil && !strings.Contains(err.Error(), "cluster-stop") {
				t.Errorf("the refusal %q does not say how to stop the other cluster", err)
			}
		})
	}
	if !isLocalAddress("127.0.0.1") || isLocalAddress("192.0.2.1") {
		t.Error("isLocalAddress: 127.0.0.1 is this machine's, 192.0.2.1 (documentation range) is not")
	}
}

// TestTails: the last lines of a log, as errors quote them.
func TestTails(t *testing.T) {
	for _, tc := range []struct{ in, two, three string }{
		{"", "", ""},
		{"one\n", "one", "one"},
		{"one\ntwo\nthree\nfour\n", "three\nfour", "two\nthree\nfour"},
		{"\n\na\nb\n\n", "a\nb", "\na\nb"},
	} {
		if got := tail2(tc.in); got != tc.two {
			t.Errorf("tail2(%q) = %q, want %q", tc.in, got, tc.two)
		}
		p := filepath.Join(t.TempDir(), "log")
		if err := os.WriteFile(p, []byte(tc.in), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := tail(p, 3); got != tc.three {
			t.Errorf("tail(%q, 3) = %q, want %q", tc.in, got, tc.three)
		}
	}
	if got := tail(filepath.Join(t.TempDir(), "absent"), 3); !strings.Contains(got, "no such file") {
		t.Errorf("tail of a missing file = %q, want the error", got)
	}
}

// TestPhase: a phase is timed and logged when it succeeds, and its error names it.
func TestPhase(t *testing.T) {
	cl := &Cluster{}
	var log bytes.Buffer
	if err := cl.phase(&log, "etcd", func() error { return nil }); err != nil || !strings.HasPrefix(log.String(), "cluster: etcd (") {
		t.Errorf("phase = %v, log %q", err, log.String())
	}
	boom := errors.New("boom")
	if err := cl.phase(&log, "kubelet", func() error { return boom }); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "kubelet: ") {
		t.Errorf("failed phase = %v, want boom named by its phase", err)
	}
	if diff := cmp.Diff([]string{"etcd", "kubelet"}, []string{cl.Took[0].Name, cl.Took[1].Name}); diff != "" || strings.Count(log.String(), "\n") != 1 {
		t.Errorf("Took (-want +got):\n%s; log %q", diff, log.String())
	}
}
