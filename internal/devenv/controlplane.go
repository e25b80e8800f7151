package devenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"terraplane.io/terraplane/config/crd"
)

// ControlPlane is a local etcd + kube-apiserver with Terraplane's CRDs installed.
type ControlPlane struct {
	env *envtest.Environment
	// Config is an admin REST config.
	Config *rest.Config
	// Kubeconfig is the path of an admin kubeconfig file.
	Kubeconfig string
}

// StartControlPlane starts an in-memory control plane (etcd's data in a directory removed
// on Stop) with an admin kubeconfig at kubeconfigPath.
func StartControlPlane(kubeconfigPath string) (*ControlPlane, error) {
	return StartControlPlaneWith(ControlPlaneOptions{Kubeconfig: kubeconfigPath})
}

// ControlPlaneOptions configure a local control plane.
type ControlPlaneOptions struct {
	// Kubeconfig is where the admin kubeconfig is written.
	Kubeconfig string
	// DataDir keeps etcd's data, so that a control plane started again on it has every
	// object the last one had; empty means a directory removed on Stop.
	DataDir string
	// StartTimeout is how long each of etcd and kube-apiserver may take to start; 0 means
	// $KUBEBUILDER_CONTROLPLANE_START_TIMEOUT, else DefaultStartTimeout.
	StartTimeout time.Duration
	// AuditLog, when set, is where kube-apiserver logs every write request it answers
	// (verb, object, user agent and code, as JSON lines; no request or response bodies).
	AuditLog string
	// FeatureGates, when set, is kube-apiserver's --feature-gates ("Name=false,...").
	FeatureGates string
	// EditCRD, when set, changes each CRD before it is installed (a benchmark's variant).
	EditCRD func(*apiextensionsv1.CustomResourceDefinition)
}

// writesOnly is the audit policy of AuditLog: the metadata of each answered write.
const writesOnly = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch", "delete", "deletecollection"]
- level: None
`

// auditLogMaxMB is the size of the audit log the API server rotates at: far beyond any
// run's writes.
const auditLogMaxMB = 1 << 20

// DefaultStartTimeout is how long each of etcd and kube-apiserver may take to start:
// seconds on an idle machine, more than a minute on a busy one.
const DefaultStartTimeout = 3 * time.Minute

// startTimeoutEnv is envtest's variable for the start timeout.
const startTimeoutEnv = "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT"

// StartError is a control plane that did not start, with the time each part was given.
type StartError struct {
	// Timeout is how long each of etcd and kube-apiserver was given.
	Timeout time.Duration
	// Err is why it did not start.
	Err error
}

// Error says what failed and how long it was given.
func (e *StartError) Error() string {
	return fmt.Sprintf("start control plane (etcd and kube-apiserver were each given %s): %v", e.Timeout, e.Err)
}

// Unwrap is why it did not start.
func (e *StartError) Unwrap() error { return e.Err }

// startTimeout is o's start timeout; 0 leaves it to envtest's variable.
func (o ControlPlaneOptions) startTimeout() time.Duration {
	if o.StartTimeout == 0 && os.Getenv(startTimeoutEnv) == "" {
		return DefaultStartTimeout
	}
	return o.StartTimeout
}

// StartControlPlaneWith starts etcd and kube-apiserver from the toolchain cache, installs
// (or updates) the CRDs, and writes an admin kubeconfig.
func StartControlPlaneWith(o ControlPlaneOptions) (*ControlPlane, error) {
	kubeconfigPath := o.Kubeconfig
	for _, tool := range []string{"etcd", "kube-apiserver"} {
		if _, err := Tool(tool); err != nil {
			return nil, err
		}
	}
	crds, err := crd.CRDs()
	if err != nil {
		return nil, err
	}
	if o.EditCRD != nil {
		for _, c := range crds {
			o.EditCRD(c)
		}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    BinDir(),
		CRDs:                     crds,
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: o.startTimeout(),
	}
	if err := o.configure(env); err != nil {
		return nil, err
	}
	if o.DataDir != "" {
		dir, err := filepath.Abs(o.DataDir)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("etcd data directory: %w", err)
		}
		env.ControlPlane.Etcd = &envtest.Etcd{DataDir: dir} // kept on Stop: envtest removes only directories it made
	}
	if _, err := env.Start(); err != nil {
		_ = env.Stop() // what did start
		return nil, &StartError{Timeout: env.ControlPlaneStartTimeout, Err: err}
	}
	cp := &ControlPlane{env: env}
	user, err := env.AddUser(envtest.User{Name: "terraplane-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		cp.Stop()
		return nil, fmt.Errorf("add admin user: %w", err)
	}
	cp.Config = user.Config()
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		cp.Stop()
		return nil, fmt.Errorf("make kubeconfig: %w", err)
	}
	if kubeconfigPath, err = filepath.Abs(kubeconfigPath); err != nil {
		cp.Stop()
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(kubeconfigPath), 0o700); err != nil {
		cp.Stop()
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		cp.Stop()
		return nil, fmt.Errorf("write kubeconfig: %w", err)
	}
	cp.Kubeconfig = kubeconfigPath
	return cp, nil
}

// configure sets the flags o asks of env's kube-apiserver.
func (o ControlPlaneOptions) configure(env *envtest.Environment) error {
	args := env.ControlPlane.GetAPIServer().Configure()
	args.Set("service-cluster-ip-range", "10.0.0.0/24")
	if o.FeatureGates != "" {
		args.Set("feature-gates", o.FeatureGates)
	}
	if o.AuditLog != "" {
		return auditWrites(env, o.AuditLog)
	}
	return nil
}

// auditWrites makes env's kube-apiserver log every write it answers to path, with the
// policy written beside it.
func auditWrites(env *envtest.Environment, path string) error {
	path, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	policy := path + ".policy.yaml"
	if err := os.WriteFile(policy, []byte(writesOnly), 0o600); err != nil {
		return fmt.Errorf("write audit policy: %w", err)
	}
	args := env.ControlPlane.GetAPIServer().Configure()
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", path)
	args.Set("audit-log-format", "json")
	args.Set("audit-log-mode", "batch") // the API server answers without waiting for the log
	// one file, never rotated: a reader counts from an offset in it, and at 100 MB (the
	// default size) a fleet of 10,000 claims' writes would be rotated away
	args.Set("audit-log-maxsize", strconv.Itoa(auditLogMaxMB))
	return nil
}

// EtcdMetricsURL is etcd's metrics endpoint (on loopback, plain HTTP, as envtest runs it).
func (c *ControlPlane) EtcdMetricsURL() string {
	if c.env == nil || c.env.ControlPlane.Etcd == nil || c.env.ControlPlane.Etcd.URL == nil {
		return ""
	}
	return c.env.ControlPlane.Etcd.URL.JoinPath("metrics").String()
}

// Stop stops kube-apiserver and etcd.
func (c *ControlPlane) Stop() {
	if c.env != nil {
		_ = c.env.Stop()
	}
}

// Wait blocks until ctx ends.
func Wait(ctx context.Context) { <-ctx.Done() }
