package plugins

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
)

// Starter starts provider processes for a Pool. The pool's own runs each provider's
// binary behind a caching proxy; unit tests give it a fake.
type Starter interface {
	// Start starts the provider of l and returns once it serves, or could not.
	Start(l Launch) (Handle, error)
}

// Launch is one provider process to start.
type Launch struct {
	// Provider is the provider to run.
	Provider Provider
	// Env is the process's environment, credentials included.
	Env map[string]string
	// Socket is where terraform reaches the process.
	Socket string
	// Types are the resource and data source types terraform is told of; nil means all.
	Types map[string]bool
	// Stopping is asked, each time a run asks the provider to stop, whether the request
	// goes on to it: only once every run it serves has asked.
	Stopping func() bool
}

// Handle is a started provider process.
type Handle interface {
	// Pid is the provider's process id, which terraform is given.
	Pid() int
	// Protocol is the plugin protocol it speaks: 5 or 6.
	Protocol() int
	// Exited is closed once the process has exited.
	Exited() <-chan struct{}
	// Kill stops the process and returns once it has exited.
	Kill()
}

// magicCookie is the handshake value Terraform gives its provider plugins.
const magicCookie = "TF_PLUGIN_MAGIC_COOKIE=d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2"

// startTimeout bounds how long a provider takes to start serving.
const startTimeout = time.Minute

// execStarter runs provider binaries, each behind a proxy that answers pure calls from
// a cache shared by every process it starts.
type execStarter struct {
	cache *answers
	log   logr.Logger
}

// execProcess is a provider binary running as a plugin server, and its proxy.
type execProcess struct {
	cmd      *exec.Cmd
	proxy    *proxy
	protocol int
	socket   string
	exited   chan struct{}
}

var _ Handle = (*execProcess)(nil)

// Start runs l's binary with l's environment, reads its handshake and puts a proxy in
// front of it on l's socket.
func (s execStarter) Start(l Launch) (Handle, error) {
	cmd := exec.Command(l.Provider.Binary)
	cmd.Env = append(envList(providerEnv(l.Env)), magicCookie, "PLUGIN_PROTOCOL_VERSIONS=5,6")
	// its own process group, and gone with the controller
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		cmd.Stderr = io.Discard
		err = cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("start provider %s: %w", l.Provider.Address, err)
	}
	p := &execProcess{cmd: cmd, socket: l.Socket, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	network, target, protocol, err := handshake(context.Background(), stdout, p.exited)
	if err != nil {
		p.Kill()
		return nil, fmt.Errorf("provider %s: %w", l.Provider.Address, err)
	}
	p.protocol = protocol
	pure := &pureCalls{binary: l.Provider.Binary, cache: s.cache, types: l.Types, log: s.log}
	if p.proxy, err = newProxy(l.Socket, network, target, pure, l.Stopping); err != nil {
		p.Kill()
		return nil, fmt.Errorf("proxy for provider %s: %w", l.Provider.Address, err)
	}
	go p.proxy.prefetchSchema(protocol)
	return p, nil
}

// handshake reads the plugin's first line, core-version|protocol|network|address|grpc,
// then keeps draining its output.
func handshake(ctx context.Context, stdout io.Reader, exited <-chan struct{}) (network, addr string, protocol int, err error) {
	lines := make(chan string, 1)
	r := bufio.NewReader(stdout)
	go func() {
		line, _ := r.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, r)
	}()
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var line string
	select {
	case line = <-lines:
	case <-exited:
		return "", "", 0, fmt.Errorf("exited before serving")
	case <-ctx.Done():
		return "", "", 0, fmt.Errorf("did not start serving within %s: %w", startTimeout, ctx.Err())
	}
	return parseHandshake(line)
}

// parseHandshake reads a plugin's handshake line.
func parseHandshake(line string) (network, addr string, protocol int, err error) {
	parts := strings.Split(strings.TrimSpace(line), "|")
	if len(parts) < 5 || parts[0] != "1" || parts[4] != "grpc" {
		return "", "", 0, fmt.Errorf("unexpected plugin handshake %q", line)
	}
	protocol, err = strconv.Atoi(parts[1])
	if err != nil {
		return "", "", 0, fmt.Errorf("unexpected plugin protocol %q", parts[1])
	}
	return parts[2], parts[3], protocol, nil
}

// serveGated serves one run's calls on a socket of its own, its changes held by g.
func (p *execProcess) serveGated(socket string, g *runGate) (func(), error) {
	return p.proxy.serveGated(socket, g)
}

// serveRecorded serves one run's calls on a socket of its own, its reads recorded in r.
func (p *execProcess) serveRecorded(socket, address string, r *Reads) (func(), error) {
	return p.proxy.serveRecorded(socket, address, r)
}

// askAgain asks the provider recorded calls again; same when it answers them alike.
func (p *execProcess) askAgain(ctx context.Context, calls []call) (bool, error) {
	return p.proxy.askAgain(ctx, calls)
}

// Pid is the provider's process id.
func (p *execProcess) Pid() int { return p.cmd.Process.Pid }

// Protocol is the plugin protocol the provider speaks.
func (p *execProcess) Protocol() int { return p.protocol }

// Exited is closed once the provider has exited.
func (p *execProcess) Exited() <-chan struct{} { return p.exited }

// Kill stops the proxy and the provider's process group, and removes the socket.
func (p *execProcess) Kill() {
	if p.proxy != nil {
		p.proxy.close()
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
	_ = os.Remove(p.socket)
}

// providerEnv is a provider process's environment: env, with GOMAXPROCS set to the
// cores this process may use (runtime.GOMAXPROCS, which follows a container's CPU limit)
// unless env sets it. A provider built before Go 1.25 would size its scheduler and
// garbage collector by the host's CPUs, however few the container may use.
func providerEnv(env map[string]string) map[string]string {
	if _, set := env["GOMAXPROCS"]; set {
		return env
	}
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	out["GOMAXPROCS"] = strconv.Itoa(runtime.GOMAXPROCS(0))
	return out
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
