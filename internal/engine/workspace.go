package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
	"terraplane.io/terraplane/internal/holder"
)

// Files kept in a workspace directory besides the rendered ones.
const (
	initStampFile = ".terraplane-init"
	planFile      = ".terraplane.tfplan"
	lockFile      = ".terraform.lock.hcl"
	dataDir       = ".terraform"
	// secretVarsFile holds SecretVars only while a terraform command runs.
	secretVarsFile = "terraplane-secret.auto.tfvars.json"
)

// Workspace is one root module with its own state.
type Workspace struct {
	// ID names the workspace directory under the engine's work directory (the managed UID).
	ID string
	// Kind and Name say whose workspace it is, for metrics and logs: the kind with its
	// API group, as kubectl writes it (S3Bucket.storage.aws.terraplane.io), and
	// namespace/name.
	Kind, Name string
	// Files are the rendered files, relative to the workspace directory.
	Files map[string][]byte
	// Group is what per-group caps count this workspace under (its Provider).
	Group string
	// Env holds secret settings (provider credentials) for the child process only; their
	// values are redacted from every error.
	Env map[string]string
	// SecretVars are variable values read from Secrets: written to a tfvars file only
	// while a terraform command runs, removed after it, and redacted from every error.
	SecretVars map[string]any
	// BackendConfig are the backend settings of this workspace alone (the state's name),
	// given to init as -backend-config. With them out of the files, workspaces of one
	// module share one init: later ones copy the first one's result.
	BackendConfig map[string]string
	// Lock is the dependency lock (.terraform.lock.hcl) the workspace runs with: init
	// installs the versions it holds, and never upgrades them by itself. Nil leaves the
	// choice to terraform (the newest versions the configuration allows at the first init).
	Lock []byte
	// Timeout bounds each terraform command of this workspace; 0 means the engine's
	// (Options.Timeout).
	Timeout time.Duration
	// Pool names the runner pool that runs the workspace, in the namespace of its state
	// (BackendConfig namespace); empty means the namespace's default pool. The engine
	// itself does not read it.
	Pool string
	// Creates says that an apply of this workspace creates its resources (or carries on
	// an interrupted create): the state lock records the create while the apply runs,
	// and keeps the record when its outcome is not known (OutcomeUnknown), so that no
	// later run creates blindly again.
	Creates bool
	// Check, for a create (Engine.Create), is what its plan is checked against inside
	// its one apply, before its first change reaches a provider (Options.CheckCreate
	// reads it). Nil runs no check.
	Check json.RawMessage `json:",omitempty"`
	// Order places the workspace's runs among the runs waiting for the engine's ramp:
	// the oldest starts first, a zero Order after every other, and equal ones in the
	// order they came. The renderer sets the managed resource's creation time, which
	// Kubernetes keeps to the second: runs of older resources go before newer ones.
	Order time.Time `json:",omitzero"`
}

// secrets are the values to redact from ws's errors.
func (ws Workspace) secrets() map[string]string {
	if len(ws.SecretVars) == 0 {
		return ws.Env
	}
	out := maps.Clone(ws.Env)
	if out == nil {
		out = map[string]string{}
	}
	for name, v := range ws.SecretVars {
		if s, ok := v.(string); ok {
			out["var."+name] = s
		} else if b, err := json.Marshal(v); err == nil {
			out["var."+name] = string(b)
		}
	}
	return out
}

// Output is one root module output.
type Output struct {
	// Value as JSON.
	Value json.RawMessage
	// Sensitive outputs must only go to connection Secrets.
	Sensitive bool
}

// Dir is the directory of the workspace with id.
func (e *Engine) Dir(id string) string { return filepath.Join(e.opts.WorkDir, id) }

// Remove deletes the workspace directory; state is not there, so nothing is lost.
func (e *Engine) Remove(id string) error {
	if id == "" || strings.ContainsAny(id, `/\`) {
		return fmt.Errorf("invalid workspace id %q", id)
	}
	e.handles.forget(id)
	e.rereads.forget(id)
	return os.RemoveAll(e.Dir(id))
}

// prepare takes a terraform slot for ws, writes ws to disk, runs init if its
// configuration changed, and returns a terraform-exec handle for it. The slot is held
// until done is called, so one verb's commands (init, plan, apply, output) run back to
// back, as a pipeline step runs `terraform init && terraform apply`, and a workspace half
// way through does not queue again behind every other workspace's init.
func (e *Engine) prepare(ctx context.Context, ws Workspace) (tf *tfexec.Terraform, done func(), err error) {
	return e.prepareWith(ctx, ws, nil)
}

// prepareWith is prepare, calling beforeInit (when not nil) once ws's files are written
// and before its init.
func (e *Engine) prepareWith(ctx context.Context, ws Workspace, beforeInit func()) (tf *tfexec.Terraform, done func(), err error) {
	if ws.ID == "" || strings.ContainsAny(ws.ID, `/\`) {
		return nil, nil, fmt.Errorf("invalid workspace id %q", ws.ID)
	}
	untrack := e.track(ws.ID)
	slot, err := e.acquire(ctx, ws)
	if err != nil {
		untrack()
		return nil, nil, err
	}
	if tf, err = e.handle(ws); err == nil {
		if beforeInit != nil {
			beforeInit()
		}
		err = e.ensureInit(ctx, ws, tf)
	}
	if err == nil {
		err = e.pushErroredState(ctx, ws, tf)
	}
	release := func() { e.handles.put(ws.ID, tf); slot(); untrack() }
	if err != nil {
		release()
		return nil, nil, err
	}
	return tf, release, nil
}

// handle writes ws's files and makes a terraform-exec handle for its directory.
func (e *Engine) handle(ws Workspace) (*tfexec.Terraform, error) {
	dir := e.Dir(ws.ID)
	if err := syncFiles(dir, ws.Files); err != nil {
		return nil, err
	}
	tf, err := e.handles.take(ws.ID, dir, e.execPath)
	if err != nil {
		return nil, err
	}
	if err := tf.SetEnv(e.terraformEnv(ws)); err != nil {
		return nil, fmt.Errorf("terraform environment: %w", err)
	}
	if err := tf.SetWaitDelay(e.opts.GracePeriod); err != nil {
		return nil, fmt.Errorf("terraform wait delay: %w", err)
	}
	return tf, nil
}

// passEnv are the controller's environment variables terraform gets: the basics, the
// in-cluster API address (the kubernetes state backend's in_cluster_config) and proxies
// (network mirrors and registries).
var passEnv = []string{"PATH", "HOME", "TMPDIR", "LANG", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBE_CONFIG_PATH", "KUBE_IN_CLUSTER_CONFIG", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"}

// env is the child process environment: a minimal base, the CLI config, and ws.Env.
func (e *Engine) env(ws Workspace) map[string]string {
	env := map[string]string{
		"TF_CLI_CONFIG_FILE": e.cliConfig,
		"CHECKPOINT_DISABLE": "1",
		// what this run starts can be found, and stopped, should this process die
		holder.Env: e.holderID(),
	}
	for _, k := range passEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	if b := e.opts.StateBackend; b != nil {
		env["KUBE_CONFIG_PATH"] = b.Kubeconfig()
		delete(env, "KUBE_IN_CLUSTER_CONFIG")
	}
	for k, v := range ws.Env {
		env[k] = v
	}
	return env
}

// holderID is the id the state locks of this engine's runs name their holder by: the
// locker's, else this process's.
func (e *Engine) holderID() string {
	if e.opts.Locker != nil {
		return e.opts.Locker.HolderID()
	}
	return holder.Self().ID
}

// Run describes one finished terraform command, for metrics and logs.
type Run struct {
	// Verb is the command: init, plan, show, apply, output, destroy, state-push,
	// state-pull; or RereadVerb, a drift check answered without terraform.
	Verb string
	// Workspace is the workspace's ID; Kind and Name say whose it is.
	Workspace  string
	Kind, Name string
	// Started is when the command started, Duration how long it ran.
	Started  time.Time
	Duration time.Duration
	// Err is the command's error, secret values redacted; nil on success.
	Err error
}

// seed writes an empty state for a workspace the engine locks, before its first command
// in this process and before every init. Any command that finds no state (a state pull
// on a copied init, say) writes a first one under a lock of terraform's own, which a run
// killed midway leaves behind with no holder to judge: the state is there first. A
// command that locks the state has it seeded by its lock, in the same write.
func (e *Engine) seed(ctx context.Context, ws Workspace, verb string) error {
	if !e.locksItself(ws) || lockingVerbs[verb] {
		return nil
	}
	if _, done := e.seeded.Load(ws.ID); done && verb != "init" {
		return nil
	}
	if err := e.opts.Locker.SeedState(ctx, ws.BackendConfig); err != nil {
		return fmt.Errorf("seed state: %w", err)
	}
	e.seeded.Store(ws.ID, true)
	return nil
}

// run executes one terraform command, in the slot prepare took, under the command
// deadline, redacts the workspace's secrets from its error and reports the run.
func (e *Engine) run(ctx context.Context, ws Workspace, verb string, cmd func(context.Context) error) (err error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout(ws))
	defer cancel()
	if len(ws.SecretVars) > 0 {
		remove, err := writeSecretVars(e.Dir(ws.ID), ws.SecretVars)
		if err != nil {
			return err
		}
		defer remove()
	}
	if err := e.seed(ctx, ws, verb); err != nil {
		return err
	}
	locked := lockingVerbs[verb] && e.locksItself(ws)
	var seeded, last []byte // the state the lock wrote, if it did; the state last seen
	if locked {
		unlock, wrote, lerr := e.opts.Locker.LockState(ctx, ws.BackendConfig, verb, ws.Creates && verb == "apply")
		if lerr != nil {
			return lerr
		}
		e.seeded.Store(ws.ID, true) // the lock found a state, or wrote one
		seeded = wrote
		defer func() { unlock(!OutcomeUnknown(err), last) }()
	}
	e.processes.Add(1)
	start := time.Now()
	if e.opts.OnRun != nil {
		defer func() {
			e.opts.OnRun(Run{Verb: verb, Workspace: ws.ID, Kind: ws.Kind, Name: ws.Name, Started: start, Duration: time.Since(start), Err: err})
		}()
	}
	_, tracked := e.activity.start(ws.ID, verb)
	defer tracked()
	last, err = e.command(ctx, ws, locked, seeded, cmd)
	if err != nil && locked && unseeded.MatchString(err.Error()) {
		last = nil
		if err = e.opts.Locker.SeedState(ctx, ws.BackendConfig); err == nil {
			last, err = e.command(ctx, ws, locked, nil, cmd) // the state is there now: terraform no longer locks it itself
		}
	}
	if err != nil {
		// Once the context has ended, the run's own error says nothing more (and
		// terraform-exec's, for a process that exited cleanly just then, has no message
		// at all): report why it stopped.
		if ctx.Err() != nil {
			return e.stopped(ctx, ws, verb)
		}
		if verb != "init" && initRequired.MatchString(err.Error()) {
			e.forgetInit(ws) // the next run initialises for real
		}
		return e.unsaved(ws, Redact(err, ws.secrets()))
	}
	return nil
}

// command runs cmd; while it holds ws's state lock (locked), the state backend answers
// terraform's reads of the state from what the lock wrote of it (seeded) or from the
// first read, and from terraform's own writes after; last is the state Secret as the
// state backend last saw it, when it did.
func (e *Engine) command(ctx context.Context, ws Workspace, locked bool, seeded []byte, cmd func(context.Context) error) (last []byte, err error) {
	b := e.opts.StateBackend
	if b == nil || !locked {
		return nil, cmd(ctx)
	}
	release := b.Hold(ws.BackendConfig["namespace"], StateSecret(ws.BackendConfig["secret_suffix"]), seeded)
	err = cmd(ctx)
	return release(), err
}

// timeout is the deadline of each of ws's commands: its own, or the engine's.
func (e *Engine) timeout(ws Workspace) time.Duration {
	if ws.Timeout > 0 {
		return ws.Timeout
	}
	return e.opts.Timeout
}

// writeSecretVars writes vars where terraform loads them by itself, for one command; the
// returned func removes the file. A file a crash leaves behind is removed by the next
// run's sync of the workspace, or when the engine starts.
func writeSecretVars(dir string, vars map[string]any) (remove func(), err error) {
	b, err := json.Marshal(vars)
	if err != nil {
		return nil, fmt.Errorf("encode secret variables: %w", err)
	}
	path := filepath.Join(dir, secretVarsFile)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, fmt.Errorf("write secret variables: %w", err)
	}
	return func() { _ = os.Remove(path) }, nil
}

// syncFiles makes dir hold exactly files, besides terraform's own data; unchanged files are not rewritten.
func syncFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create workspace: %w", err)
	}
	for name, content := range files {
		if err := writeIfChanged(filepath.Join(dir, filepath.FromSlash(name)), content, 0o600); err != nil {
			return err
		}
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if kept(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if _, ok := files[rel]; !ok && !d.IsDir() {
			return os.Remove(p)
		}
		return nil
	})
}

func kept(rel string) bool {
	switch rel {
	case initStampFile, planFile, lockFile, dataDir, fullSchemaFile, erroredStateFile, "terraform.tfstate", "terraform.tfstate.backup":
		return true
	}
	return false
}

func writeIfChanged(path string, content []byte, mode os.FileMode) error {
	if current, err := os.ReadFile(path); err == nil && string(current) == string(content) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, content, mode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
