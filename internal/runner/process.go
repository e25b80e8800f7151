package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/fnv"
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
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"terraplane.io/terraplane/internal/engine"
)

// Processes launches each pool's runner as a child process, `terraplane runner`. When
// this process runs as root, a runner runs under a uid of its own (UIDBase and up, one
// per pool), in directories only that uid may use, so that what a module runs can read
// neither the controller's files nor another pool's; otherwise it runs as this uid. Its
// Kubernetes identity is a token minted for the pool's ServiceAccount, in a kubeconfig
// of its own, and the socket it listens on needs a token this process made.
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
	// means 20000.
	UIDBase int
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

	mu      sync.Mutex
	running map[PoolRef]*process
	targets targets
	shared  sync.Once
	bin     string // the binary, where runners may run it
	tf      string // terraform, where runners may run it
	mirror  string // the mirror, where runners may read it
	sharedE error
}

// process is one pool's runner.
type process struct {
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
	if proc := p.running[pool]; proc != nil && proc.alive() {
		return proc.client, nil
	}
	proc, err := p.start(ctx, pool)
	if err != nil {
		return nil, err
	}
	p.running[pool] = proc
	return proc.client, nil
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
	procs := p.running
	p.running = nil
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

// uid is the uid pool's runner runs under; -1 when this process cannot switch uid.
func (p *Processes) uid(pool PoolRef) int {
	if os.Geteuid() != 0 {
		return -1
	}
	base := p.UIDBase
	if base == 0 {
		base = 20000
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(pool.String()))
	return base + int(h.Sum32()%10000)
}

// start starts pool's runner and waits until it answers on its socket.
func (p *Processes) start(ctx context.Context, pool PoolRef) (*process, error) {
	uid := p.uid(pool)
	if err := p.prepareShared(uid >= 0); err != nil {
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
	proc := &process{cmd: cmd, exited: make(chan struct{}), stop: stop,
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

// poolDir makes pool's directory, usable by uid alone (and root): its work directory,
// home and temporary files, kubeconfig and socket. The directories above it may be
// passed through, not listed.
func (p *Processes) poolDir(pool PoolRef, uid int) (string, error) {
	for _, d := range []string{p.Dir, filepath.Join(p.Dir, "pools")} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return "", fmt.Errorf("runner directory: %w", err)
		}
		if err := os.Chmod(d, 0o711); err != nil {
			return "", err
		}
	}
	dir := filepath.Join(p.Dir, "pools", pool.Namespace+"_"+pool.Name)
	for _, sub := range []string{"", "work", "home", "tmp"} {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", fmt.Errorf("runner directory: %w", err)
		}
		if err := chown(d, uid); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// writeKubeconfig writes the runner's kubeconfig: the API server, its CA, and a token
// file with the pool's token.
func (p *Processes) writeKubeconfig(dir, token string, uid int) (string, error) {
	tokenFile := filepath.Join(dir, "token")
	if err := writeOwned(tokenFile, []byte(token), uid); err != nil {
		return "", err
	}
	cluster := &clientcmdapi.Cluster{Server: p.Config.Host, CertificateAuthorityData: p.Config.CAData,
		InsecureSkipTLSVerify: p.Config.Insecure, TLSServerName: p.Config.ServerName}
	if len(cluster.CertificateAuthorityData) == 0 && p.Config.CAFile != "" {
		ca, err := os.ReadFile(p.Config.CAFile)
		if err != nil {
			return "", fmt.Errorf("API server CA: %w", err)
		}
		cluster.CertificateAuthorityData = ca
	}
	cfg := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"cluster": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"runner": {TokenFile: tokenFile}},
		Contexts:       map[string]*clientcmdapi.Context{"runner": {Cluster: "cluster", AuthInfo: "runner"}},
		CurrentContext: "runner",
	}
	raw, err := clientcmd.Write(cfg)
	if err != nil {
		return "", fmt.Errorf("runner kubeconfig: %w", err)
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, writeOwned(path, raw, uid)
}

// prepareShared puts what runners under another uid run and read where they may: the
// binary and the provider mirror, linked (or copied) out of directories they cannot enter.
func (p *Processes) prepareShared(otherUID bool) error {
	p.shared.Do(func() {
		p.bin, p.tf, p.mirror = p.Binary, p.Terraform, p.PluginMirror
		if !otherUID {
			return
		}
		if err := os.MkdirAll(p.Dir, 0o711); err != nil {
			p.sharedE = err
			return
		}
		if err := os.Chmod(p.Dir, 0o711); err != nil {
			p.sharedE = err
			return
		}
		p.bin, p.tf = filepath.Join(p.Dir, "bin", "terraplane"), filepath.Join(p.Dir, "bin", filepath.Base(p.Terraform))
		if p.sharedE = linkTree(p.Binary, p.bin); p.sharedE != nil {
			return
		}
		if p.sharedE = linkTree(p.Terraform, p.tf); p.sharedE != nil {
			return
		}
		if p.PluginMirror != "" {
			p.mirror = filepath.Join(p.Dir, "mirror")
			p.sharedE = linkTree(p.PluginMirror, p.mirror)
		}
	})
	return p.sharedE
}
