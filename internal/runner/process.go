package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"terraplane.io/terraplane/internal/engine"
)

// Processes launches each pool's runner as a child process, `terraplane runner`. When
// this process runs as root, a runner runs under a uid of its own (allocated from
// UIDBase up and recorded in UIDTable), in directories only that uid may use, so that
// what a module runs can read neither the controller's files nor another pool's;
// otherwise it runs as this uid, which only SharedUID accepts. Its Kubernetes identity
// is a token minted for the pool's ServiceAccount, in a kubeconfig of its own, and the
// socket it listens on needs a token this process made. A namespace runs at most
// MaxPoolsPerNamespace runners at once, and a runner idle for IdleTTL stops until its
// pool's next run.
type Processes struct {
	// Binary is the terraplane binary the runners run.
	Binary string
	// Dir holds each pool's directory, and what runners share (the binary, the mirror).
	Dir string
	// Config is the API server the runners reach, with its CA (their credentials are
	// their own).
	Config *rest.Config
	// Identities give the pools their ServiceAccounts and tokens.
	Identities *Identities
	// PluginMirror is the filesystem mirror of providers the runners install from.
	PluginMirror string
	// Terraform is the terraform (or OpenTofu) binary the runners run.
	Terraform string
	// Args are more flags for every runner (terraform, provider reuse, ...).
	Args []string
	// UIDBase is the first uid runners run under, when this process may switch uid; 0
	// means DefaultUIDBase.
	UIDBase int
	// UIDTable is the file that records each pool's uid (in the controller's work
	// directory); needed when this process runs as root.
	UIDTable string
	// SharedUID accepts that, when this process is not root, every runner runs as its
	// uid: pools are then kept apart by their tokens only, not by the files and
	// processes they may reach. Without it, runners are refused unless this is root.
	SharedUID bool
	// MaxPoolsPerNamespace caps the runners of one namespace running at once; 0 means
	// DefaultMaxPoolsPerNamespace, less than 0 no cap.
	MaxPoolsPerNamespace int
	// IdleTTL is how long a runner without runs lives before it stops (it starts again on
	// its pool's next run); 0 means DefaultIdleTTL, less than 0 never.
	IdleTTL time.Duration
	// OnRun is told about every terraform command a runner reports.
	OnRun func(engine.Run)
	// OnCall is told about every run sent to a runner, with its pool.
	OnCall func(PoolRef, Call)
	// MetricsAddress, when set, is where each runner serves its metrics (host:port; port
	// 0 picks a free one): its terraform processes and warm provider pool.
	MetricsAddress string
	// MetricsTargets, when set, is a file kept listing the running runners' metrics
	// endpoints, in Prometheus' file-based service discovery format.
	MetricsTargets string
	// Log says when runners start and stop.
	Log logr.Logger
	// RemoveOnStop removes Dir once every runner has stopped.
	RemoveOnStop bool

	mu       sync.Mutex
	running  map[PoolRef]*process
	stopping map[PoolRef]*process // stopped by the reaper, maybe not yet exited
	reaper   context.CancelFunc   // stops the reaper; nil until it runs
	uids     *uidTable
	targets  targets
	shared   sync.Once
	bin      string // the binary, where runners may run it
	tf       string // terraform, where runners may run it
	mirror   string // the mirror, where runners may read it
	sharedE  error
}

// process is one pool's runner.
type process struct {
	pool   PoolRef
	cmd    *exec.Cmd
	client *Client
	exited chan struct{}
	stop   context.CancelFunc
	// metrics is where it serves its metrics; empty when it serves none.
	metrics string
}

// Launch returns a client of pool's runner, starting it if it is not running.
func (p *Processes) Launch(ctx context.Context, pool PoolRef) (*Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running == nil {
		p.running = map[PoolRef]*process{}
	}
	p.startReaper()
	if proc := p.running[pool]; proc != nil && proc.alive() {
		proc.client.touch(0)
		return proc.client, nil
	}
	if err := p.admit(pool); err != nil {
		return nil, err
	}
	if err := p.awaitStopped(ctx, pool); err != nil {
		return nil, err
	}
	proc, err := p.start(ctx, pool)
	if err != nil {
		return nil, err
	}
	p.running[pool] = proc
	return proc.client, nil
}

// Running is the client of pool's runner process when it is alive, touching nothing.
func (p *Processes) Running(pool PoolRef) *Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	if proc := p.running[pool]; proc != nil && proc.alive() {
		return proc.client
	}
	return nil
}

// Forget drops pool's runner if it has exited, so that the next Launch starts another.
func (p *Processes) Forget(pool PoolRef) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if proc := p.running[pool]; proc != nil && !proc.alive() {
		delete(p.running, pool)
	}
}

// Stop asks every runner to stop (their runs are interrupted and write their state) and
// waits for them.
func (p *Processes) Stop() {
	p.mu.Lock()
	procs := make([]*process, 0, len(p.running)+len(p.stopping))
	for _, proc := range p.running {
		procs = append(procs, proc)
	}
	for _, proc := range p.stopping {
		procs = append(procs, proc)
	}
	p.running, p.stopping = nil, nil
	if p.reaper != nil {
		p.reaper()
		p.reaper = nil
	}
	p.mu.Unlock()
	for _, proc := range procs {
		proc.stop()
	}
	for _, proc := range procs {
		select {
		case <-proc.exited:
		case <-time.After(engine.DefaultGracePeriod + 15*time.Second):
			_ = proc.cmd.Process.Kill()
		}
	}
	if p.RemoveOnStop {
		_ = os.RemoveAll(p.Dir)
	}
}

func (proc *process) alive() bool {
	select {
	case <-proc.exited:
		return false
	default:
		return true
	}
}

// uid is the uid pool's runner runs under: the one the table records for it when this
// process runs as root, else -1 (this process's own), which only SharedUID accepts.
func (p *Processes) uid(pool PoolRef) (int, error) {
	if euid := geteuid(); euid != 0 {
		if !p.SharedUID {
			return -1, &SharedUIDError{UID: euid}
		}
		return -1, nil
	}
	if p.uids == nil {
		if p.UIDTable == "" {
			return -1, fmt.Errorf("runner pool %s: no runner uid table to record its uid in", pool)
		}
		base := p.UIDBase
		if base == 0 {
			base = DefaultUIDBase
		}
		p.uids = &uidTable{path: p.UIDTable, base: base, count: DefaultUIDCount, poolsDir: filepath.Join(p.Dir, "pools"),
			otherPools: filepath.Join(filepath.Dir(p.Dir), processDirPrefix+"*", "pools")}
	}
	return p.uids.assign(pool)
}

// start starts pool's runner and waits until it answers on its socket.
func (p *Processes) start(ctx context.Context, pool PoolRef) (*process, error) {
	if err := p.prepareShared(geteuid() == 0); err != nil {
		return nil, err
	}
	uid, err := p.uid(pool)
	if err != nil {
		return nil, err
	}
	dir, err := p.poolDir(pool, uid)
	if err != nil {
		return nil, err
	}
	token, err := p.Identities.Ensure(ctx, pool)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := p.writeKubeconfig(dir, token, uid)
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	auth := hex.EncodeToString(secret)
	socket := filepath.Join(dir, "runner.sock")
	_ = os.Remove(socket)
	runCtx, stop := context.WithCancel(context.Background())
	args := append([]string{"runner", "--pool", pool.String(), "--socket", socket, "--workdir", filepath.Join(dir, "work"),
		"--kubeconfig", kubeconfig, "--plugin-mirror", p.mirror, "--terraform", p.tf}, p.Args...)
	if p.MetricsAddress != "" {
		args = append(args, "--metrics-bind-address", p.MetricsAddress)
	}
	cmd := exec.CommandContext(runCtx, p.bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = engine.DefaultGracePeriod + 10*time.Second
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(dir, "home"), "TMPDIR=" + filepath.Join(dir, "tmp"),
		"KUBE_CONFIG_PATH=" + kubeconfig, "CHECKPOINT_DISABLE=1"}
	cmd.Stdin = strings.NewReader(auth + "\n")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if uid >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	if err := cmd.Start(); err != nil {
		stop()
		return nil, fmt.Errorf("start runner: %w", err)
	}
	proc := &process{pool: pool, cmd: cmd, exited: make(chan struct{}), stop: stop,
		client: NewClient(socket, auth, p.OnRun)}
	if p.OnCall != nil {
		proc.client.OnCall = func(c Call) { p.OnCall(pool, c) }
	}
	go func() {
		err := cmd.Wait()
		p.publish(pool, "") // before a runner that replaces it may publish its own
		close(proc.exited)
		p.Log.Info("runner stopped", "pool", pool.String(), "reason", fmt.Sprint(err))
	}()
	if err := waitForSocket(ctx, socket, proc.exited); err != nil {
		stop()
		return nil, fmt.Errorf("runner of pool %s: %w", pool, err)
	}
	if p.MetricsAddress != "" {
		info, err := proc.client.Info(ctx)
		if err != nil {
			stop()
			return nil, fmt.Errorf("runner of pool %s: %w", pool, err)
		}
		proc.metrics = info.MetricsAddress
		p.publish(pool, proc.metrics)
	}
	p.Log.Info("runner started", "pool", pool.String(), "pid", cmd.Process.Pid, "uid", uid, "metrics", proc.metrics)
	return proc, nil
}

// waitForSocket waits until something listens on socket, the process exits, or a minute passes.
func waitForSocket(ctx context.Context, socket string, exited <-chan struct{}) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("unix", socket); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before it served")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("did not serve within a minute")
}
