package framework

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"terraplane.io/terraplane/internal/devenv"
)

// Moto is a moto_server (the AWS API emulator) on loopback.
type Moto struct {
	// Endpoint is its base URL; every emulated service (s3, sts, iam, ...) answers there.
	Endpoint string
	cmd      *exec.Cmd
}

// StartMoto starts moto_server on a free loopback port, logging to dir/moto.log.
func StartMoto(ctx context.Context, dir string) (*Moto, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, fmt.Errorf("moto_server is not on PATH: run make tools-test (the AWS API emulator, Python moto 5)")
	}
	port, err := devenv.FreePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "moto.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	m := &Moto{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.Endpoint+"/moto-api/", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return m, nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	m.Stop()
	return nil, fmt.Errorf("moto_server did not answer on %s within 30s (see %s)", m.Endpoint, logFile.Name())
}

// Stop stops moto_server.
func (m *Moto) Stop() {
	if m != nil && m.cmd.Process != nil {
		_ = m.cmd.Process.Kill()
		_ = m.cmd.Wait()
	}
}
