package runner

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"terraplane.io/terraplane/internal/engine"
)

// TestMain lets this test binary be a runner, for TestIdleRunnerStopsAndStartsAgain:
// run as `<binary> runner ... --socket PATH ...`, it serves the runner protocol there
// (the token on stdin, as `terraplane runner` reads it) until SIGTERM.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "runner" {
		os.Exit(serveAsRunner(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func serveAsRunner(args []string) int {
	socket := ""
	for i, a := range args {
		if a == "--socket" && i+1 < len(args) {
			socket = args[i+1]
		}
	}
	token, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil || socket == "" {
		return 2
	}
	runs := &fakeRuns{}
	runs.srv = &Server{Runs: runs, Token: strings.TrimSpace(token)}
	lis, err := net.Listen("unix", socket)
	if err != nil {
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	hs := &http.Server{Handler: runs.srv}
	go func() { <-ctx.Done(); _ = hs.Close() }()
	_ = hs.Serve(lis)
	return 0
}

// TestIdleRunnerStopsAndStartsAgain launches a real runner process (this binary in its
// runner role, under a pool uid when the test runs as root): once it has had no run for
// the idle TTL it stops, and the pool's next run starts another that serves it.
func TestIdleRunnerStopsAndStartsAgain(t *testing.T) {
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = rbacv1.AddToScheme(scheme)
	tokens := kfake.NewClientset(&corev1.ServiceAccount{})
	tokens.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return a.GetSubresource() == "token", &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: "t"}}, nil
	})
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// the runners' directories must be reachable by their uids: not under t.TempDir()
	top, err := os.MkdirTemp("", "terraplane-reaper-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(top)
	if err := os.Chmod(top, 0o711); err != nil {
		t.Fatal(err)
	}
	p := &Processes{Binary: bin, Terraform: bin, Dir: filepath.Join(top, "runners"), Config: &rest.Config{Host: "https://127.0.0.1:1"},
		Identities: &Identities{Client: fake.NewClientBuilder().WithScheme(scheme).Build(), Tokens: tokens},
		UIDTable:   filepath.Join(t.TempDir(), "runner-uids.json"), SharedUID: true, IdleTTL: time.Second, Log: logr.Discard()}
	defer p.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool := PoolRef{"team-a", DefaultPool}
	ws := engine.Workspace{ID: "ws", BackendConfig: map[string]string{"namespace": "team-a"}}

	c, err := p.Launch(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, ws); err != nil {
		t.Fatalf("a run on the first runner: %v", err)
	}
	p.mu.Lock()
	first := p.running[pool]
	p.mu.Unlock()
	select {
	case <-first.exited:
	case <-ctx.Done():
		t.Fatal("the idle runner did not stop")
	}
	again, err := (&Pools{Launcher: p}).Create(ctx, ws)
	if err != nil {
		t.Fatalf("the pool's next run: %v", err)
	}
	p.mu.Lock()
	second := p.running[pool]
	p.mu.Unlock()
	if second == nil || second == first || !second.alive() || again.Resources != 2 {
		t.Errorf("after the idle runner stopped, the next run got %+v from runner %+v", again, second)
	}
	t.Logf("FIGURE runner pid %d stopped idle; pid %d serves the next run", first.cmd.Process.Pid, second.cmd.Process.Pid)
}

// TestChosenPoolNameRunsApart launches the runners of two pools, one named by a tenant
// so that its name hashes onto the other's uid as uids were once derived: each runs
// under a uid of its own, and the tenant's uid can neither read the other pool's token
// nor list its directory. Uids need root.
func TestChosenPoolNameRunsApart(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("runner uids need root: run the test as root, as make e2e does")
	}
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	_ = rbacv1.AddToScheme(scheme)
	tokens := kfake.NewClientset(&corev1.ServiceAccount{})
	tokens.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return a.GetSubresource() == "token", &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: "token-of-" + a.GetNamespace()}}, nil
	})
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	top, err := os.MkdirTemp("", "terraplane-uids-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(top)
	if err := os.Chmod(top, 0o711); err != nil {
		t.Fatal(err)
	}
	p := &Processes{Binary: bin, Terraform: bin, Dir: filepath.Join(top, "runners"), Config: &rest.Config{Host: "https://127.0.0.1:1"},
		Identities: &Identities{Client: fake.NewClientBuilder().WithScheme(scheme).Build(), Tokens: tokens},
		UIDTable:   filepath.Join(t.TempDir(), "runner-uids.json"), Log: logr.Discard()}
	defer p.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	victim := PoolRef{"tenant-b", DefaultPool}
	chosen := collidingPool(t, "tenant-a", victim)
	for _, pool := range []PoolRef{victim, chosen} {
		if _, err := p.Launch(ctx, pool); err != nil {
			t.Fatal(err)
		}
	}
	dir := func(pool PoolRef) string { return filepath.Join(p.Dir, "pools", poolDirName(pool)) }
	victimUID, _ := ownerOf(dir(victim))
	tenantUID, _ := ownerOf(dir(chosen))
	t.Logf("FIGURE %s and %s both hashed to uid %d; allocated %d and %d", victim, chosen, hashedUID(victim), victimUID, tenantUID)
	if victimUID == tenantUID {
		t.Fatalf("pools %s and %s share uid %d", victim, chosen, victimUID)
	}
	for _, args := range [][]string{{"cat", filepath.Join(dir(victim), "token")}, {"ls", dir(victim)}} {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(tenantUID), Gid: uint32(tenantUID)}}
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("as %s's uid, %v succeeds: %s", chosen, args, out)
		}
	}
}
