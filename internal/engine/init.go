package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/hashicorp/terraform-exec/tfexec"

	"terraplane.io/terraplane/internal/module"
)

// ensureInit readies the workspace for this configuration: nothing when it is ready,
// otherwise a copy of another workspace's init of the same module, or terraform init.
// While one workspace of a module runs init, the others wait for it and copy its result.
func (e *Engine) ensureInit(ctx context.Context, ws Workspace, tf *tfexec.Terraform) error {
	dir := e.Dir(ws.ID)
	module := e.moduleChecksum(ws)
	stamp := initStamp(module, ws.BackendConfig)
	current, stampErr := os.ReadFile(filepath.Join(dir, initStampFile))
	if stampErr == nil && (string(current) == stamp || e.initHoldsLock(ws, string(current))) {
		if _, err := os.Stat(filepath.Join(dir, dataDir)); err == nil {
			if string(current) == stamp {
				return nil
			}
			return writeStamp(dir, stamp)
		}
	}
	for {
		if err := e.inits.restore(module, dir, ws.BackendConfig); err == nil {
			e.initsShared.Add(1)
			return writeStamp(dir, stamp)
		}
		done, err := e.initFlights.lead(ctx, module)
		if err != nil {
			return err
		}
		if done != nil {
			defer done()
			break
		}
	}
	if err := e.initLocked(ctx, ws, tf, stampErr == nil); err != nil {
		return fmt.Errorf("terraform init: %w", err)
	}
	e.inits.save(module, dir)
	return writeStamp(dir, stamp)
}

// initHoldsLock reports whether the init stamped current, made without a dependency lock,
// installed the lock ws now names: the lock a first create recorded, which its later runs
// are given, or the lock of a plan made there, which its apply is given. The workspace is
// ready for them as it is, and needs no init again.
func (e *Engine) initHoldsLock(ws Workspace, current string) bool {
	if ws.Lock == nil || !bytes.Equal(readLock(e.Dir(ws.ID)), ws.Lock) {
		return false
	}
	unlocked := ws
	unlocked.Lock = nil
	return current == initStamp(e.moduleChecksum(unlocked), ws.BackendConfig)
}

// forgetInit makes ws's next run initialise with terraform init, and drops the cached
// init of its module that it may have been copied from.
func (e *Engine) forgetInit(ws Workspace) {
	_ = os.Remove(filepath.Join(e.Dir(ws.ID), initStampFile))
	e.inits.forget(e.moduleChecksum(ws))
}

// writeStamp records which configuration dir was initialised for.
func writeStamp(dir, stamp string) error {
	if err := os.WriteFile(filepath.Join(dir, initStampFile), []byte(stamp), 0o600); err != nil {
		return fmt.Errorf("record init: %w", err)
	}
	return nil
}

// initGOGC is the garbage collection target terraform init runs with. Init is short,
// starts no provider and keeps a small heap, yet at Go's default target it spends about
// a fifth of its CPU collecting while that heap first grows. Plan, apply and destroy keep
// the default: providers inherit terraform's environment, and their heaps can be large.
const initGOGC = "400"

// initTerraform runs init with initGOGC (unless env sets GOGC), then gives the handle
// env back for the commands that follow.
func initTerraform(ctx context.Context, tf *tfexec.Terraform, env map[string]string, upgrade bool, backend map[string]string) error {
	initEnv := maps.Clone(env)
	if _, set := initEnv["GOGC"]; !set {
		initEnv["GOGC"] = initGOGC
	}
	if err := tf.SetEnv(initEnv); err != nil {
		return fmt.Errorf("terraform environment: %w", err)
	}
	defer func() { _ = tf.SetEnv(env) }()
	opts := []tfexec.InitOption{tfexec.Reconfigure(true), tfexec.Upgrade(upgrade)}
	for _, k := range slices.Sorted(maps.Keys(backend)) {
		opts = append(opts, tfexec.BackendConfig(k+"="+backend[k]))
	}
	return tf.Init(ctx, opts...)
}

// moduleChecksum covers everything init depends on but the backend settings of one
// workspace: all files but the input values and provider settings, the lock, and the CLI
// config. Workspaces with equal checksums can share one init.
func (e *Engine) moduleChecksum(ws Workspace) string {
	h := sha256.New()
	module.WriteFiles(h, ws.Files, func(name string) bool { return !valuesFile(name) })
	fmt.Fprintf(h, "%s\x00%s", e.execPath, e.cliConfig)
	cfg, _ := os.ReadFile(e.cliConfig)
	h.Write(cfg)
	if ws.Lock != nil {
		fmt.Fprintf(h, "\x00lock\x00%d\x00", len(ws.Lock))
		h.Write(ws.Lock)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// initStamp names one workspace's init: its module checksum and its backend settings.
func initStamp(module string, backend map[string]string) string {
	h := sha256.New()
	h.Write([]byte(module))
	for _, k := range slices.Sorted(maps.Keys(backend)) {
		fmt.Fprintf(h, "\x00%s=%s", k, backend[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}
