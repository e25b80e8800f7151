package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/go-logr/logr"
	install "github.com/hashicorp/hc-install"
	"github.com/hashicorp/hc-install/fs"
	"github.com/hashicorp/hc-install/product"
	"github.com/hashicorp/hc-install/src"

	"terraplane.io/terraplane/internal/plugins"
	"terraplane.io/terraplane/templates"
)

// Options configure an Engine.
type Options struct {
	// TerraformPath is the terraform binary; empty finds it on PATH.
	TerraformPath string
	// WorkDir holds one directory per workspace.
	WorkDir string
	// PluginMirror is the filesystem mirror every workspace installs providers from.
	PluginMirror string
	// AllowDirect also lets terraform download providers from their registries.
	AllowDirect bool
	// NetworkMirror is the URL of a provider network mirror (the static-file protocol).
	NetworkMirror string
	// PluginCacheDir caches providers that a network mirror or a registry served; empty
	// means <WorkDir>/.plugin-cache. Unused when providers come only from PluginMirror.
	PluginCacheDir string
	// ModuleRegistryURL is the base URL of a module registry (terraform's modules.v1
	// protocol) that serves the modules a configuration addresses to the public registry
	// (source = "org/name/system"), e.g. an internal mirror; empty leaves them to
	// registry.terraform.io (registry.opentofu.org for OpenTofu).
	ModuleRegistryURL string
	// MaxConcurrent caps terraform processes running at once; 0 means 2 × CPUs.
	MaxConcurrent int
	// CPU reads the idle CPU that lets a burst's runs start faster than one per run
	// ended (see ramp): ContainerCPU within a CPU limit; nil reads the machine's.
	CPU CPUMeter
	// MaxConcurrentPerGroup caps terraform processes of one group (a Provider, say) at
	// once, within MaxConcurrent; 0 means no per-group cap.
	MaxConcurrentPerGroup int
	// Timeout bounds every terraform command; 0 means DefaultTimeout.
	Timeout time.Duration
	// GracePeriod is how long a cancelled terraform gets after SIGINT; 0 means 30 seconds.
	GracePeriod time.Duration
	// OnRun, when set, is told about every terraform command once it ends.
	OnRun func(Run)
	// CheckCreate checks a create's plan against its workspace's Check; nil refuses
	// every create that has a Check.
	CheckCreate CreateChecker
	// ProviderReuse keeps provider processes warm between runs and lends them to
	// terraform through its reattach protocol (package plugins).
	ProviderReuse bool
	// ProviderTTL is how long a reused provider process lives; 0 means plugins.DefaultTTL.
	ProviderTTL time.Duration
	// ProviderRunsPerProcess is how many runs one reused provider process serves at
	// once; 0 means plugins.DefaultRunsPerProcess.
	ProviderRunsPerProcess int
	// ProviderMemoryBudget caps the resident memory of the warm provider processes, in
	// bytes (idle ones are stopped past it, the least recently used first); 0: no cap.
	ProviderMemoryBudget int64
	// Log says when a warm provider process is stopped to stay within the budget.
	Log logr.Logger
	// Locker, when set, holds the state lock of every workspace with a kubernetes
	// backend (BackendConfig secret_suffix) around each command that writes its state,
	// in place of terraform; nil leaves locking to terraform.
	Locker StateLocker
	// StateBackend, when set, is where terraform's kubernetes state backend reaches its
	// cluster: its kubeconfig takes the place of the environment's, and Stop closes it.
	StateBackend StateBackend
}

// StateBackend is a kubeconfig for terraform's kubernetes state backend that lives as
// long as the engine (backendproxy.Proxy).
type StateBackend interface {
	// Kubeconfig is the file's path.
	Kubeconfig() string
	// Hold answers the reads of the state Secret namespace/name from what it last read
	// or wrote of it, or from known (the Secret as JSON) until then, until release, which
	// says what it last knew of it (nil: nothing): for a state whose lock the engine holds.
	Hold(namespace, name string, known []byte) (release func() (last []byte))
	// Close ends it.
	Close() error
}

// StateLocker takes a workspace's state lock, named by its backend settings, for one
// terraform command (verb), which runs under ctx's deadline; unlock releases it, also
// after ctx has ended.
type StateLocker interface {
	// LockState takes the lock, writing an empty state first for a workspace that has
	// none; one taken for a create (create) records the create until unlock is told that
	// the command's outcome is settled (known, and in the state). A lock taken in the
	// write that seeds the state says what it wrote: the state Secret as the API server
	// returned it, as JSON (seeded); nil otherwise. unlock may be told the state Secret
	// as the API server last returned it (state), which spares it a read.
	LockState(ctx context.Context, backend map[string]string, verb string, create bool) (unlock func(settled bool, state []byte), seeded []byte, err error)
	// SeedState writes an empty state for a workspace that has none: terraform locks the
	// state itself, whatever -lock says, to write a workspace's first state.
	SeedState(ctx context.Context, backend map[string]string) error
	// HolderID is the id the locks name their holder by, which marks every terraform
	// process (holder.Env) so that a later holder can stop what a dead one left running.
	HolderID() string
}

// unseeded matches terraform's error when it could not lock a state that does not exist
// yet, to write its first state, because the engine holds the lock.
var unseeded = regexp.MustCompile(`(?is)error loading state:.*already locked`)

// StateSecret is the name of the Secret terraform's kubernetes backend keeps the state of
// the default workspace in, with secret_suffix suffix.
func StateSecret(suffix string) string { return "tfstate-default-" + suffix }

// lockingVerbs are the commands that lock the state.
var lockingVerbs = map[string]bool{"plan": true, "apply": true, "destroy": true, "state-push": true}

// locksItself reports whether the engine, not terraform, holds ws's state lock.
func (e *Engine) locksItself(ws Workspace) bool {
	return e.opts.Locker != nil && ws.BackendConfig["secret_suffix"] != ""
}

// DefaultTimeout bounds every terraform command unless Options.Timeout says otherwise.
const DefaultTimeout = 20 * time.Minute

// DefaultGracePeriod is how long a cancelled terraform gets after SIGINT to finish
// what it is doing and write its state.
const DefaultGracePeriod = 30 * time.Second

// Engine runs terraform for many workspaces.
type Engine struct {
	opts      Options
	execPath  string
	cliConfig string
	slots     chan struct{}
	ramp      *ramp // how many of the slots a burst may use yet
	processes atomic.Int64

	mu     sync.Mutex
	groups map[string]chan struct{}

	inflight map[string]int // verbs running per workspace
	handles  handlePool

	inits       initCache     // one init per module, copied to its other workspaces
	initFlights initFlights   // the inits running, by module: one at a time
	upgrades    upgradeProbes // newer provider versions, probed once per module and lock
	initsShared atomic.Int64  // inits copied rather than run

	plugins ProviderPool              // plugins.Off without provider reuse
	lent    map[string]*plugins.Lease // providers lent, per workspace
	seeded  sync.Map                  // workspaces whose state this process saw written
	rereads rereads                   // the reads of each workspace's last plan without changes

	activity activities // what each workspace's streaming command does now
}

// ProviderPool lends terraform runs warm provider processes: a *plugins.Pool with
// provider reuse on, plugins.Off (which lends none) with it off.
type ProviderPool interface {
	// Acquire lends a process for each of providers to one run, which gives them back
	// with Lease.Release; a Lease with no Reattach leaves terraform to start its own.
	Acquire(ctx context.Context, providers []plugins.Provider, env map[string]string, config []byte, types []string) (*plugins.Lease, error)
	// Started counts the provider processes started so far.
	Started() int
	// Stop ends the processes, those lent as their runs end.
	Stop()
}

// New finds terraform and prepares the work directory and CLI configuration.
func New(ctx context.Context, opts Options) (*Engine, error) {
	if opts.WorkDir == "" {
		return nil, fmt.Errorf("engine: no work directory")
	}
	if opts.MaxConcurrent <= 0 {
		opts.MaxConcurrent = 2 * runtime.NumCPU()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.GracePeriod <= 0 {
		opts.GracePeriod = DefaultGracePeriod
	}
	execPath, err := FindTerraform(opts.TerraformPath)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.WorkDir, 0o700); err != nil {
		return nil, fmt.Errorf("create work directory: %w", err)
	}
	// Secret variables a crashed run left behind.
	leftovers, _ := filepath.Glob(filepath.Join(opts.WorkDir, "*", secretVarsFile))
	for _, f := range leftovers {
		_ = os.Remove(f)
	}
	if opts.CPU == nil {
		opts.CPU = MachineCPU()
	}
	e := &Engine{opts: opts, execPath: execPath, slots: make(chan struct{}, opts.MaxConcurrent), plugins: plugins.Off{},
		lent: map[string]*plugins.Lease{}, ramp: newRamp(opts.MaxConcurrent, opts.CPU)}
	if e.handles.known, err = terraformVersion(ctx, execPath, opts.WorkDir); err != nil { // a broken binary fails here, not in every reconcile
		return nil, err
	}
	if e.cliConfig, err = e.writeCLIConfig(); err != nil {
		return nil, err
	}
	if e.inits, err = newInitCache(filepath.Join(opts.WorkDir, ".init")); err != nil {
		return nil, err
	}
	if opts.ProviderReuse {
		if e.plugins, err = plugins.NewPool(os.TempDir(), plugins.Options{TTL: opts.ProviderTTL, RunsPerProcess: opts.ProviderRunsPerProcess,
			MemoryBudget: opts.ProviderMemoryBudget, Log: opts.Log}); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Stop stops the provider processes kept warm (those in use as their runs end) and closes
// the state backend once no terraform command runs (those interrupted write their state
// through it), or after a command's deadline and grace period.
func (e *Engine) Stop() {
	e.plugins.Stop()
	if b := e.opts.StateBackend; b != nil {
		go func() {
			e.waitIdle(e.opts.Timeout + e.opts.GracePeriod)
			_ = b.Close()
		}()
	}
}

// waitIdle returns once no terraform command holds a slot, or after limit.
func (e *Engine) waitIdle(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for len(e.slots) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
}

// ServesStateBackend says whether terraform's kubernetes state backend finds its cluster
// in the engine's StateBackend, which then leaves no room for a cluster named in the
// configuration's backend block.
func (e *Engine) ServesStateBackend() bool { return e.opts.StateBackend != nil }

// TerraformEnv names the binary the engine runs when no flag does (a path, or a name on
// PATH): Terraplane's image sets it to the binary it bundles, tofu by default.
const TerraformEnv = "TERRAPLANE_TERRAFORM"

// FindTerraform locates the terraform (or OpenTofu) binary with hc-install: path may be
// a file, or a binary name looked up on PATH such as "tofu"; empty means $TERRAPLANE_TERRAFORM,
// and terraform when that is empty too.
func FindTerraform(path string) (string, error) {
	if path == "" {
		path = os.Getenv(TerraformEnv)
	}
	source := &fs.AnyVersion{Product: &product.Terraform}
	switch {
	case strings.ContainsRune(path, filepath.Separator):
		source = &fs.AnyVersion{ExactBinPath: path}
	case path != "":
		name := path
		source = &fs.AnyVersion{Product: &product.Product{Name: name, BinaryName: func() string { return name }}}
	}
	execPath, err := install.NewInstaller().Ensure(context.Background(), []src.Source{source})
	if err != nil {
		return "", fmt.Errorf("terraform not found (install terraform >= 1.5 or OpenTofu on PATH, or pass --terraform): %w", err)
	}
	return execPath, nil
}

// TerraformPath is the binary the engine runs.
func (e *Engine) TerraformPath() string { return e.execPath }

// Processes is the number of terraform processes started so far.
func (e *Engine) Processes() int64 { return e.processes.Load() }

// InitsShared is the number of workspaces initialised by copying another workspace's
// init of the same module rather than running terraform init.
func (e *Engine) InitsShared() int64 { return e.initsShared.Load() }

// WorkDir is the directory that holds the workspaces.
func (e *Engine) WorkDir() string { return e.opts.WorkDir }

func (e *Engine) writeCLIConfig() (string, error) {
	tmpl, err := template.New("cli").Parse(templates.CLIConfig)
	if err != nil {
		return "", fmt.Errorf("parse CLI config template: %w", err)
	}
	var buf bytes.Buffer
	data, err := e.cliConfigData()
	if err != nil {
		return "", err
	}
	if err := tmpl.Execute(&buf, data); err != nil {
		return "", fmt.Errorf("render CLI config: %w", err)
	}
	path := filepath.Join(e.opts.WorkDir, "terraform.tfrc")
	if err := writeIfChanged(path, buf.Bytes(), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// acquire takes a slot of ws's group (when groups are capped), then a global slot, then
// waits for the ramp to let the run start, after the runs of older work (Workspace.Order).
func (e *Engine) acquire(ctx context.Context, ws Workspace) (func(), error) {
	group := ws.Group
	var groupSlots chan struct{}
	if e.opts.MaxConcurrentPerGroup > 0 && group != "" {
		groupSlots = e.group(group)
		select {
		case groupSlots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	releaseGroup := func() {
		if groupSlots != nil {
			<-groupSlots
		}
	}
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		releaseGroup()
		return nil, ctx.Err()
	}
	if err := e.ramp.enter(ctx, ws.Order); err != nil {
		<-e.slots
		releaseGroup()
		return nil, err
	}
	return func() {
		e.ramp.leave()
		<-e.slots
		releaseGroup()
	}, nil
}

func (e *Engine) group(name string) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.groups == nil {
		e.groups = map[string]chan struct{}{}
	}
	g, ok := e.groups[name]
	if !ok {
		g = make(chan struct{}, e.opts.MaxConcurrentPerGroup)
		e.groups[name] = g
	}
	return g
}

// ProvidersStarted counts the provider processes started to be kept warm (0 without
// provider reuse).
func (e *Engine) ProvidersStarted() int { return e.plugins.Started() }

// ProviderStats is what the warm provider pool did and holds, by provider address; nil
// without provider reuse, or with a pool that keeps no statistics.
func (e *Engine) ProviderStats() map[string]plugins.ProviderStats {
	if e == nil || e.plugins == nil {
		return nil
	}
	if s, ok := e.plugins.(interface {
		Stats() map[string]plugins.ProviderStats
	}); ok {
		return s.Stats()
	}
	return nil
}
