package devenv

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// MinIO is a MinIO server on loopback.
type MinIO struct {
	cmd *exec.Cmd
	// Endpoint is the server's URL, e.g. http://127.0.0.1:9900.
	Endpoint string
	// AccessKey and SecretKey are the root credentials.
	AccessKey, SecretKey string
}

// StartMinIO starts MinIO on 127.0.0.1:port (0 picks a free port) with data in dir.
func StartMinIO(ctx context.Context, dir string, port int, accessKey, secretKey string) (*MinIO, error) {
	return StartMinIOOn(ctx, "127.0.0.1", dir, port, accessKey, secretKey)
}

// StartMinIOOn starts MinIO on host:port (0 picks a free port), e.g. on a cluster node's
// address, where pods reach it.
func StartMinIOOn(ctx context.Context, host, dir string, port int, accessKey, secretKey string) (*MinIO, error) {
	bin, err := Tool("minio")
	if err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = freePortOn(host); err != nil {
			return nil, err
		}
	}
	console, err := freePortOn(host)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("minio data dir: %w", err)
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	cmd := exec.Command(bin, "server", "--quiet", "--address", addr, "--console-address", net.JoinHostPort(host, strconv.Itoa(console)), dir)
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+accessKey, "MINIO_ROOT_PASSWORD="+secretKey,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start minio: %w", err)
	}
	m := &MinIO{cmd: cmd, Endpoint: "http://" + addr, AccessKey: accessKey, SecretKey: secretKey}
	if err := waitHTTP(ctx, m.Endpoint+"/minio/health/ready", 60*time.Second); err != nil {
		m.Stop()
		return nil, fmt.Errorf("minio did not become ready on %s: %w", addr, err)
	}
	return m, nil
}

// Stop stops MinIO.
func (m *MinIO) Stop() { stopProcess(m.cmd) }

// stopProcess stops a server started by this package: SIGTERM, then SIGKILL after 10s.
func stopProcess(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// FreePort returns a free TCP port on 127.0.0.1.
func FreePort() (int, error) { return freePortOn("127.0.0.1") }

// freePortOn returns a free TCP port on host.
func freePortOn(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
