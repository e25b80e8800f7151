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
}

func (e *Engine) cliConfigData() (cliConfigData, error) {
	d := cliConfigData{Direct: e.opts.AllowDirect}
	if e.opts.PluginMirror != "" {
		if fi, err := os.Stat(e.opts.PluginMirror); err == nil && fi.IsDir() {
			d.Mirror = e.opts.PluginMirror
		}
	}
	if e.opts.NetworkMirror != "" {
		u, err := url.Parse(e.opts.NetworkMirror)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return d, fmt.Errorf("provider network mirror %q is not an https URL (terraform accepts only https)", e.opts.NetworkMirror)
		}
		// Terraform resolves provider paths relative to the URL, which must end in a slash.
		d.NetworkMirror = strings.TrimSuffix(e.opts.NetworkMirror, "/") + "/"
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
