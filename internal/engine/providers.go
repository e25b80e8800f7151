package engine

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// cliConfigData says where terraform installs providers from: the filesystem mirror
// (when the directory exists, or nothing else is configured), a network mirror, the registries, and the shared plugin
// cache that the last two fill.
type cliConfigData struct {
	Mirror        string
	NetworkMirror string
	Direct        bool
	PluginCache   string
	// ModuleRegistry is the modules.v1 URL that stands in for the public registries.
	ModuleRegistry string
	// PublicRegistries are the hosts that ModuleRegistry stands in for.
	PublicRegistries []string
}

// publicRegistries are the hosts of the public registries, which a module source of the
// form org/name/system means to terraform and OpenTofu respectively.
var publicRegistries = []string{"registry.terraform.io", "registry.opentofu.org"}

func (e *Engine) cliConfigData() (cliConfigData, error) {
	d := cliConfigData{Direct: e.opts.AllowDirect, Mirror: e.pluginMirror()}
	if e.opts.NetworkMirror != "" {
		u, err := url.Parse(e.opts.NetworkMirror)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return d, fmt.Errorf("provider network mirror %q is not an https URL (terraform accepts only https)", e.opts.NetworkMirror)
		}
		// Terraform resolves provider paths relative to the URL, which must end in a slash.
		d.NetworkMirror = strings.TrimSuffix(e.opts.NetworkMirror, "/") + "/"
	}
	if e.opts.ModuleRegistryURL != "" {
		u, err := url.Parse(e.opts.ModuleRegistryURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return d, fmt.Errorf("module registry %q is not an http or https URL", e.opts.ModuleRegistryURL)
		}
		// Terraform appends namespace/name/system to the URL, which must end in a slash.
		d.ModuleRegistry = strings.TrimSuffix(e.opts.ModuleRegistryURL, "/") + "/"
		d.PublicRegistries = publicRegistries
	}
	if d.NetworkMirror != "" || d.Direct {
		d.PluginCache = e.opts.PluginCacheDir
		if d.PluginCache == "" {
			d.PluginCache = filepath.Join(e.opts.WorkDir, ".plugin-cache")
		}
		if err := os.MkdirAll(d.PluginCache, 0o700); err != nil {
			return d, fmt.Errorf("create plugin cache: %w", err)
		}
	}
	if d.Mirror == "" && d.NetworkMirror == "" && !d.Direct {
		// Nothing else to install from: keep the mirror, and init says what it lacks.
		d.Mirror = e.opts.PluginMirror
	}
	return d, nil
}

// pluginMirror is the filesystem mirror init installs from, if it exists.
func (e *Engine) pluginMirror() string {
	if e.opts.PluginMirror == "" {
		return ""
	}
	if fi, err := os.Stat(e.opts.PluginMirror); err != nil || !fi.IsDir() {
		return ""
	}
	return e.opts.PluginMirror
}
