package plugins

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// magicCookie is the handshake value Terraform gives its provider plugins.
const magicCookie = "TF_PLUGIN_MAGIC_COOKIE=d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2"

// startTimeout bounds how long a provider takes to start serving.
const startTimeout = time.Minute

// process is one provider plugin process and the proxy in front of it.
type process struct {
	key      string
	address  string // the provider's address, registry.terraform.io/hashicorp/aws
	protocol int    // the plugin protocol it speaks: 5 or 6
	socket   string // where the proxy listens
	cmd      *exec.Cmd
	proxy    *proxy
	ready    chan struct{} // closed once it serves, or failed to start (err)
	err      error
	exited   chan struct{}
	started  time.Time
	lastUsed time.Time
	uses     int  // runs served
	runs     int  // runs using it now (or waiting for it to start)
	stops    int  // of those, runs that asked it to stop
	retired  bool // lent no more; killed once runs is 0
}

// newProcess is a process of key about to start, its proxy to listen on socket.
func newProcess(key, address, socket string) *process {
	now := time.Now()
	return &process{key: key, address: address, socket: socket, ready: make(chan struct{}), exited: make(chan struct{}), started: now, lastUsed: now}
}

// start starts binary as a plugin server with env, and a proxy for it; ready is closed
// once it serves, or with err set.
func (p *process) start(binary string, env map[string]string, cache *answers, types map[string]bool, stopping func() bool) {
	defer close(p.ready)
	cmd := exec.Command(binary)
	cmd.Env = append(envList(env), magicCookie, "PLUGIN_PROTOCOL_VERSIONS=5,6")
	// its own process group, and gone with the controller
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		cmd.Stderr = io.Discard
		err = cmd.Start()
	}
	if err != nil {
		close(p.exited)
		p.err = fmt.Errorf("start provider %s: %w", p.address, err)
		return
	}
	p.cmd = cmd
	go func() { _ = cmd.Wait(); close(p.exited) }()
	network, target, protocol, err := handshake(context.Background(), stdout, p.exited)
	if err != nil {
		p.kill()
		p.err = fmt.Errorf("provider %s: %w", p.address, err)
		return
	}
	p.protocol = protocol
	if p.proxy, err = newProxy(p.socket, network, target, binary, cache, types); err != nil {
		p.kill()
		p.err = fmt.Errorf("proxy for provider %s: %w", p.address, err)
		return
	}
	p.proxy.stopping = stopping
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

// alive reports whether the provider is still running, or still starting.
func (p *process) alive() bool {
	select {
	case <-p.ready:
	default:
		return true
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill stops the proxy and the provider.
func (p *process) kill() {
	if p.proxy != nil {
		p.proxy.close()
	}
	if p.cmd != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-p.exited
	_ = os.Remove(p.socket)
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
