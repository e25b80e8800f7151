package devenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Moto is moto_server, the AWS API emulator, on loopback. It keeps what it emulates in
// memory only, unless started with MotoOptions.Persist.
type Moto struct {
	cmd *exec.Cmd
	// Endpoint is the server's URL, e.g. http://127.0.0.1:9900; every emulated service
	// (s3, sts, iam, ...) answers there.
	Endpoint string
}

// motoRecording is the file in StartMoto's directory that holds the recorded requests.
const motoRecording = "requests.jsonl"

// MotoOptions configure StartMoto.
type MotoOptions struct {
	// Port is its port on 127.0.0.1; 0 picks a free one.
	Port int
	// Persist records the requests that change something in the directory, and replays
	// them when it starts again there: a bucket made in one run is there in the next.
	Persist bool
	// Env is added to its environment.
	Env []string
}

// StartMoto starts moto_server, logging to dir/moto.log.
func StartMoto(ctx context.Context, dir string, o MotoOptions) (*Moto, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, errors.New("moto_server (the AWS API emulator, Python moto 5) is not on PATH: run `make tools`")
	}
	port := o.Port
	if port == 0 {
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("moto data dir: %w", err)
	}
	recording, env, replay := filepath.Join(dir, motoRecording), o.Env, false
	if o.Persist {
		if replay, err = compactRecordingFile(recording); err != nil {
			return nil, err
		}
		env = append(env[:len(env):len(env)], "MOTO_ENABLE_RECORDING=true", "MOTO_RECORDER_FILEPATH="+recording)
	}
	m, err := startMotoProcess(bin, dir, port, env)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "moto.log")
	if err := waitHTTP(ctx, m.Endpoint+"/moto-api/", 60*time.Second); err != nil {
		m.Stop()
		return nil, fmt.Errorf("moto_server did not answer on %s: %w (see %s)", m.Endpoint, err, logPath)
	}
	if replay {
		if err := m.replay(ctx); err != nil {
			m.Stop()
			return nil, fmt.Errorf("replay %s: %w (see %s)", recording, err, logPath)
		}
	}
	return m, nil
}

// startMotoProcess starts moto_server on 127.0.0.1:port, its output appended to dir/moto.log.
func startMotoProcess(bin, dir string, port int, env []string) (*Moto, error) {
	logFile, err := os.OpenFile(filepath.Join(dir, "moto.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("moto log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	return &Moto{cmd: cmd, Endpoint: "http://127.0.0.1:" + strconv.Itoa(port)}, nil
}

// replay asks moto_server to replay its recording against itself (it records nothing
// while it does).
func (m *Moto) replay(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.Endpoint+"/moto-api/recorder/replay-recording", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// Stop stops moto_server.
func (m *Moto) Stop() { stopProcess(m.cmd) }

// compactRecordingFile rewrites the recording at path to the requests that change
// something and reports whether any are left to replay; a missing file has none.
func compactRecordingFile(path string) (bool, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read moto recording: %w", err)
	}
	kept := compactRecording(raw)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, kept, 0o600); err != nil {
		return false, fmt.Errorf("write moto recording: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, fmt.Errorf("write moto recording: %w", err)
	}
	return len(kept) > 0, nil
}

// compactRecording keeps the lines of a moto recording (one JSON request a line) whose
// request changes something: not a GET, HEAD or OPTIONS, and not moto's own API. Replaying
// then stays quick however long the emulator ran. A line that is not a request (a write
// cut short) is dropped.
func compactRecording(raw []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var req struct{ Method, URL string }
		if err := json.Unmarshal(line, &req); err != nil || req.Method == "" {
			continue
		}
		u, err := url.Parse(req.URL)
		if err != nil || strings.HasPrefix(u.Path, "/moto-api/") {
			continue
		}
		switch strings.ToUpper(req.Method) {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			continue
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}
