package engine

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"

	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/plugins"
)

// earlyStart is the provider processes a workspace's run asked for while its init ran:
// starting a provider and reading its schema take as long as an init, and need only
// the provider binary, which the filesystem mirror holds before init links it.
type earlyStart struct {
	types []string
	lease *plugins.Lease
	done  chan struct{}
}

// startEarly starts, in the background, the provider processes ws's run will be lent,
// when init must run first and the plugin mirror holds each provider its configuration
// pins; nil when there is nothing to start early.
func (e *Engine) startEarly(ctx context.Context, ws Workspace) *earlyStart {
	if e.initCurrent(ws) {
		return nil
	}
	providers := pinnedProviders(e.pluginMirror(), ws)
	if len(providers) == 0 {
		return nil
	}
	s := &earlyStart{types: e.namedTypes(ws), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.lease, _ = e.plugins.Acquire(ctx, providers, e.env(ws), providerConfig(ws), s.types) // the run's own Acquire reports errors
	}()
	return s
}

// end gives the early processes back once the run holds its own lease. When init
// changed the types the run names (a module it fetched), the run took none of them,
// and they are retired rather than left idle.
func (s *earlyStart) end(types []string) {
	if s == nil {
		return
	}
	<-s.done
	s.lease.Release(slices.Equal(s.types, types))
}

// initCurrent reports whether ws's directory is initialised for its configuration.
func (e *Engine) initCurrent(ws Workspace) bool {
	dir := e.Dir(ws.ID)
	current, err := os.ReadFile(filepath.Join(dir, initStampFile))
	if err != nil || string(current) != initStamp(e.moduleChecksum(ws), ws.BackendConfig) {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, dataDir))
	return err == nil
}

// exactVersion matches a version constraint that allows one version only.
var exactVersion = regexp.MustCompile(`^\s*=?\s*v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\s*$`)

// pinnedProviders are the providers ws's init will install, each with its binary in the
// unpacked filesystem mirror: those its modules require (declared or implied by their
// resources), at the versions of ws's dependency lock, else of an exact version
// constraint. Nil when one is not pinned or not in the mirror, or a module calls a
// module init must fetch (whose requirements only init reads).
func pinnedProviders(mirror string, ws Workspace) []plugins.Provider {
	if mirror == "" {
		return nil
	}
	versions := map[string]string{} // source without a public registry host → version
	if ws.Lock != nil {
		locked, err := lockedVersions(ws.Lock)
		if err != nil {
			return nil
		}
		for _, p := range locked {
			versions[shortProvider(p.Address)] = p.Version
		}
	}
	required := map[string]bool{} // full source
	for _, files := range modulesOf(ws.Files) {
		calls, err := module.ModuleSources(files)
		if err != nil {
			return nil
		}
		for _, src := range calls {
			if !strings.HasPrefix(src, "./") && !strings.HasPrefix(src, "../") {
				return nil
			}
		}
		reqs, err := module.RequiredProviders(files)
		if err != nil {
			return nil
		}
		for _, r := range reqs {
			required[r.Source] = true
			if m := exactVersion.FindStringSubmatch(r.Constraints); m != nil {
				if _, locked := versions[shortProvider(r.Source)]; !locked {
					versions[shortProvider(r.Source)] = m[1]
				}
			}
		}
	}
	var out []plugins.Provider
	for source := range required {
		version, ok := versions[shortProvider(source)]
		if !ok {
			return nil
		}
		bin := mirroredBinary(mirror, source, version)
		if bin == "" {
			return nil
		}
		out = append(out, plugins.Provider{Address: source, Binary: bin})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out
}

// modulesOf groups a workspace's configuration files by the directory of their module.
func modulesOf(files map[string][]byte) map[string]map[string][]byte {
	out := map[string]map[string][]byte{}
	for name, content := range files {
		if !configFile(name) {
			continue
		}
		dir, base := path.Split(name)
		if out[dir] == nil {
			out[dir] = map[string][]byte{}
		}
		out[dir][base] = content
	}
	return out
}

// mirroredBinary is the provider binary of address at version for this platform in the
// unpacked mirror, symlinks resolved as installedProviders resolves them; empty when the
// mirror has none.
func mirroredBinary(mirror, address, version string) string {
	dir := filepath.Join(mirror, filepath.FromSlash(address), version, runtime.GOOS+"_"+runtime.GOARCH)
	matches, _ := filepath.Glob(filepath.Join(dir, "terraform-provider-*"))
	if len(matches) != 1 {
		return ""
	}
	bin, err := filepath.EvalSymlinks(matches[0])
	if err != nil {
		return ""
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return ""
	}
	return bin
}
