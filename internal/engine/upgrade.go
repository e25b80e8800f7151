package engine

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// upgradeProbes remembers, per module checksum (which covers the lock), the lock terraform
// chooses with -upgrade, so that each module and lock is probed once per engine: the
// provider sources are read again when the controller restarts.
type upgradeProbes struct {
	mu     sync.Mutex
	probes map[string]*upgradeProbe
}

// upgradeProbe is one module's probe, run once.
type upgradeProbe struct {
	once sync.Once
	lock []byte // nil: no provider of the lock has a newer version to offer
}

// get returns key's probe, made the first time.
func (u *upgradeProbes) get(key string) *upgradeProbe {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.probes == nil {
		u.probes = map[string]*upgradeProbe{}
	}
	p, ok := u.probes[key]
	if !ok {
		p = &upgradeProbe{}
		u.probes[key] = p
	}
	return p
}

// newerLock is the lock with the newest provider versions ws's configuration allows, when
// one of them differs from ws.Lock's; nil when none does, or when ws has no lock. Workspaces
// of one module and lock share one probe; a failed probe offers nothing (and is logged).
func (e *Engine) newerLock(ctx context.Context, ws Workspace) []byte {
	if ws.Lock == nil {
		return nil
	}
	p := e.upgrades.get(e.moduleChecksum(ws))
	p.once.Do(func() {
		lock, err := e.probeUpgrade(ctx, ws)
		if err != nil {
			e.opts.Log.Info("could not look for newer provider versions; the workspace keeps its lock", "workspace", ws.Name, "error", err.Error())
			return
		}
		if len(ProviderChanges(ws.Lock, lock)) > 0 {
			p.lock = lock
		}
	})
	return p.lock
}

// probeUpgrade runs `terraform init -upgrade -backend=false` on a copy of ws's
// configuration, started from its lock, in a directory of its own, and returns the lock
// init wrote: the versions an unlocked init would install now.
func (e *Engine) probeUpgrade(ctx context.Context, ws Workspace) ([]byte, error) {
	root := filepath.Join(e.opts.WorkDir, ".upgrade-probes")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("create probe directory: %w", err)
	}
	dir, err := os.MkdirTemp(root, "probe-")
	if err != nil {
		return nil, fmt.Errorf("create probe directory: %w", err)
	}
	defer os.RemoveAll(dir)
	files := maps.Clone(ws.Files)
	maps.DeleteFunc(files, func(name string, _ []byte) bool { return valuesFile(name) }) // init reads no values
	if err := syncFiles(dir, files); err != nil {
		return nil, err
	}
	if err := writeLock(dir, ws.Lock); err != nil {
		return nil, err
	}
	tf, err := tfexec.NewTerraform(dir, e.execPath)
	if err != nil {
		return nil, fmt.Errorf("terraform: %w", err)
	}
	probe := ws
	probe.SecretVars = nil // nothing to write into the workspace's own directory
	release, err := e.acquire(ctx, ws)
	if err != nil {
		return nil, err
	}
	defer release()
	// with its slot taken, as every run's: its share of the cores counts itself
	if err := tf.SetEnv(e.terraformEnv(probe)); err != nil {
		return nil, fmt.Errorf("terraform environment: %w", err)
	}
	if err := e.run(ctx, probe, "init", func(ctx context.Context) error {
		return tf.Init(ctx, tfexec.Upgrade(true), tfexec.Backend(false))
	}); err != nil {
		return nil, fmt.Errorf("terraform init -upgrade: %w", err)
	}
	return readLock(dir), nil
}
