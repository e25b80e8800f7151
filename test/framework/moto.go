package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	// AWS managed IAM policies (AmazonEKSClusterPolicy, ...) exist, as on AWS.
	cmd.Env = append(os.Environ(), "MOTO_IAM_LOAD_MANAGED_POLICIES=true")
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

// callScript calls one operation of the AWS API with boto3 (which moto ships with) and
// prints its result as JSON: argv is endpoint, service, operation, parameters as JSON.
const callScript = `
import boto3, json, sys
client = boto3.client(sys.argv[2], endpoint_url=sys.argv[1], region_name="us-east-1",
                      aws_access_key_id="checker", aws_secret_access_key="checker")
print(json.dumps(getattr(client, sys.argv[3])(**json.loads(sys.argv[4])), default=str))
`

// Call calls an AWS API operation (boto3's snake_case name, e.g. describe_db_instances)
// on moto, as a user's AWS client would, and decodes its JSON result. An AWS error comes
// back as an error holding its code, e.g. DBInstanceNotFound.
func (m *Moto) Call(ctx context.Context, service, operation string, params map[string]any) (map[string]any, error) {
	python, err := exec.LookPath("python3")
	if err != nil {
		return nil, fmt.Errorf("python3 (with moto's boto3) is not on PATH: run make tools-test")
	}
	if params == nil {
		params = map[string]any{}
	}
	args, _ := json.Marshal(params)
	out, err := exec.CommandContext(ctx, python, "-c", callScript, m.Endpoint, service, operation, string(args)).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Errorf("%s %s: %s", service, operation, lastLine(string(ee.Stderr)))
		}
		return nil, fmt.Errorf("%s %s: %w", service, operation, err)
	}
	var result map[string]any
	if err := json.Unmarshal(out, &result); err != nil {
		return nil, fmt.Errorf("%s %s: decode %q: %w", service, operation, out, err)
	}
	return result, nil
}

// lastLine is the last non-empty line of a Python traceback: the exception.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
