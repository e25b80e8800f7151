// Package framework starts what Terraplane's integration and end-to-end tests run
// against: a real control plane, the real controllers (with the real terraform), and
// helpers to build and wait for objects.
package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/kinds"
)

// Env is a running control plane with a client.
type Env struct {
	// ControlPlane is the etcd + kube-apiserver.
	ControlPlane *devenv.ControlPlane
	// Client talks to it directly (no cache).
	Client client.Client
	dir    string
}

// Start starts a control plane for a test binary; dir holds its kubeconfig.
func Start() (*Env, error) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel()), zap.StacktraceLevel(zapcore.PanicLevel)))
	dir, err := os.MkdirTemp("", "terraplane-test-")
	if err != nil {
		return nil, err
	}
	cp, err := devenv.StartControlPlane(filepath.Join(dir, "kubeconfig"))
	if err != nil {
		return nil, fmt.Errorf("%w (the control plane comes from `make tools`)", err)
	}
	c, err := client.New(cp.Config, client.Options{Scheme: kinds.NewScheme()})
	if err != nil {
		cp.Stop()
		return nil, err
	}
	return &Env{ControlPlane: cp, Client: c, dir: dir}, nil
}

// Stop stops the control plane and removes its files.
func (e *Env) Stop() {
	e.ControlPlane.Stop()
	_ = os.RemoveAll(e.dir)
}

// TerraformBinary is the binary the tests drive: $TERRAPLANE_TERRAFORM (a path, or a name
// such as "tofu" found on PATH or in the tool cache), else terraform on PATH.
func TerraformBinary() string {
	name := os.Getenv("TERRAPLANE_TERRAFORM")
	if name == "" {
		return "terraform"
	}
	if cached := filepath.Join(devenv.CacheDir(), "bin", name); !strings.Contains(name, "/") && isExecutable(cached) {
		return cached
	}
	return name
}

// TerraformVersion is the first line of `TerraformBinary() version`, or an error naming
// the make target that installs the binary.
func TerraformVersion() (string, error) {
	out, err := exec.Command(TerraformBinary(), "version").Output()
	if err != nil {
		return "", fmt.Errorf("%s version: %w (terraform must be on PATH; OpenTofu comes from `make tools-test`)", TerraformBinary(), err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Manager is a running set of Terraplane controllers.
type Manager struct {
	// Engine is the terraform engine the controllers use.
	Engine *engine.Engine
	// WorkDir holds the workspaces.
	WorkDir string
	// Runtime is the controller-runtime manager: its cache and clients, as the
	// controllers see them.
	Runtime ctrl.Manager
	cancel  context.CancelFunc
	done    chan error
	once    sync.Once
	err     error
}

// StartManager runs the Terraplane controllers with workspaces in workDir.
func (e *Env) StartManager(workDir string, opts app.Options) (*Manager, error) {
	return e.StartManagerAs(e.ControlPlane.Config, workDir, opts)
}

// StartManagerAs runs the controllers talking to the API server with cfg, e.g. as an
// impersonated ServiceAccount; terraform's state backend still uses the admin kubeconfig.
func (e *Env) StartManagerAs(cfg *rest.Config, workDir string, opts app.Options) (*Manager, error) {
	ctx, cancel := context.WithCancel(context.Background())
	opts.WorkDir = workDir
	opts.StateKubeconfig = e.ControlPlane.Kubeconfig
	if opts.Engine.TerraformPath == "" {
		opts.Engine.TerraformPath = TerraformBinary()
	}
	if opts.Engine.PluginMirror == "" {
		opts.Engine.PluginMirror = devenv.PluginMirror()
	}
	if opts.UserErrorRetry == 0 {
		opts.UserErrorRetry = 2 * time.Second
	}
	// as `terraplane controller` does by default; TERRAPLANE_TEST_PROVIDER_REUSE=0 turns it off
	opts.Engine.ProviderReuse = os.Getenv("TERRAPLANE_TEST_PROVIDER_REUSE") != "0"
	local, err := app.NewLocal(ctx, cfg, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	mgr, err := app.Compose(ctx, cfg, opts, local)
	if err != nil {
		local.Engine.Stop()
		cancel()
		return nil, err
	}
	m := &Manager{Engine: local.Engine, WorkDir: workDir, Runtime: mgr, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	return m, nil
}

// Stop stops the controllers and waits for them; it may be called more than once.
func (m *Manager) Stop() error {
	if m == nil {
		return nil
	}
	m.once.Do(func() {
		m.cancel()
		m.err = <-m.done
	})
	return m.err
}

// Namespace creates a namespace.
func (e *Env) Namespace(ctx context.Context, name string) error {
	err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Condition returns the condition typ of obj's status conditions, read through getConds.
func Condition(conds []metav1.Condition, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return *c
	}
	return metav1.Condition{Type: typ, Status: metav1.ConditionUnknown}
}

// Events lists the events about obj.
func (e *Env) Events(ctx context.Context, obj client.Object) ([]corev1.Event, error) {
	list := &corev1.EventList{}
	if err := e.Client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
		return nil, err
	}
	var out []corev1.Event
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name == obj.GetName() && ev.InvolvedObject.UID == obj.GetUID() {
			out = append(out, ev)
		}
	}
	return out, nil
}

func zapLevel() zapcore.Level {
	if os.Getenv("TERRAPLANE_TEST_VERBOSE") != "" {
		return -1
	}
	return 2 // errors only
}
