package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"

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
// unpacked filesystem mirror: the versions of ws's dependency lock, else the root
// module's exact version constraints. Nil when any provider is not pinned or not in the
// mirror, or a module file may require providers of its own: then only init can tell.
func pinnedProviders(mirror string, ws Workspace) []plugins.Provider {
	if mirror == "" {
		return nil
	}
	versions := map[string]string{} // address → version
	if ws.Lock != nil {
		locked, err := lockedVersions(ws.Lock)
		if err != nil {
			return nil
		}
		for _, p := range locked {
			versions[p.Address] = p.Version
		}
	}
	var root struct {
		Terraform struct {
			RequiredProviders map[string]struct {
				Source  string `json:"source"`
				Version string `json:"version"`
			} `json:"required_providers"`
		} `json:"terraform"`
	}
	if err := json.Unmarshal(ws.Files[rootFile], &root); err != nil {
		return nil
	}
	required := map[string]string{} // address → version
	for name, rp := range root.Terraform.RequiredProviders {
		address := providerAddress(name, rp.Source)
		version, ok := versions[address]
		if !ok {
			m := exactVersion.FindStringSubmatch(rp.Version)
			if m == nil {
				return nil
			}
			version = m[1]
		}
		required[address] = version
	}
	if len(required) == 0 || moduleRequiresOthers(ws, required) {
		return nil
	}
	var out []plugins.Provider
	for address, version := range required {
		bin := mirroredBinary(mirror, address, version)
		if bin == "" {
			return nil
		}
		out = append(out, plugins.Provider{Address: address, Binary: bin})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out
}

// providerAddress is the full source address of a required provider: the public
// registry's when source names no host, hashicorp's when there is no source.
func providerAddress(name, source string) string {
	if source == "" {
		source = "hashicorp/" + name
	}
	parts := strings.Split(strings.ToLower(source), "/")
	if len(parts) == 2 {
		parts = append([]string{"registry.terraform.io"}, parts...)
	}
	return strings.Join(parts, "/")
}

// providerSource matches a source attribute in a module file, HCL or JSON (not the end
// of another name, such as an IAM policy's Resource).
var providerSource = regexp.MustCompile(`(?:^|[\s{,])"?source"?\s*[=:]\s*"([^"]+)"`)

// moduleRequiresOthers reports whether a module file of ws names a provider source the
// root module does not require, or calls a module init must fetch (whose requirements
// only init reads).
func moduleRequiresOthers(ws Workspace, required map[string]string) bool {
	for name, content := range ws.Files {
		if name == rootFile || !configFile(name) {
			continue
		}
		for _, m := range providerSource.FindAllSubmatch(content, -1) {
			src := string(m[1])
			if strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../") {
				continue // a local module: its files are among ws's
			}
			if _, ok := required[providerAddress("", src)]; !ok {
				return true
			}
		}
	}
	return false
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
