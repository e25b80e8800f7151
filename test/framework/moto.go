package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"terraplane.io/terraplane/internal/devenv"
)

// Moto is a moto_server (the AWS API emulator) on loopback.
type Moto struct {
	*devenv.Moto
}

// StartMoto starts moto_server on a free loopback port, logging to dir/moto.log.
func StartMoto(ctx context.Context, dir string) (*Moto, error) {
	// AWS managed IAM policies (AmazonEKSClusterPolicy, ...) exist, as on AWS.
	m, err := devenv.StartMoto(ctx, dir, devenv.MotoOptions{Env: []string{"MOTO_IAM_LOAD_MANAGED_POLICIES=true"}})
	if err != nil {
		return nil, err
	}
	return &Moto{Moto: m}, nil
}

// Stop stops moto_server.
func (m *Moto) Stop() {
	if m != nil {
		m.Moto.Stop()
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
