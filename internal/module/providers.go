package module

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-version"
)

// DefaultRegistry is the registry host of provider sources that name none.
const DefaultRegistry = "registry.terraform.io"

// RegistryHost is the registry that provider sources without a host mean to a terraform
// binary (a path or a name): registry.opentofu.org for tofu, registry.terraform.io for
// terraform. A provider mirror serves each binary under its host.
func RegistryHost(binary string) string {
	if strings.HasPrefix(filepath.Base(binary), "tofu") {
		return "registry.opentofu.org"
	}
	return DefaultRegistry
}

// ProviderRequirement is one provider a module needs.
type ProviderRequirement struct {
	// Name is the module's local name for the provider.
	Name string
	// Source is the full address, e.g. registry.terraform.io/hashicorp/aws.
	Source string
	// Constraints are the module's version constraints, e.g. "~> 5.0"; empty means any.
	Constraints string
}

// RequiredProviders lists the providers the module's top-level files require, declared
// in required_providers or implied by resources, read with terraform-config-inspect.
// Terraform's built-in provider is left out.
func RequiredProviders(files map[string][]byte) ([]ProviderRequirement, error) {
	mod, err := inspectFiles(files)
	if err != nil {
		return nil, fmt.Errorf("read required providers: %w", err)
	}
	var out []ProviderRequirement
	for name, req := range mod.RequiredProviders {
		source := req.Source
		if source == "" {
			source = "hashicorp/" + name
		}
		if source == "terraform.io/builtin/terraform" || name == "terraform" && req.Source == "" {
			continue
		}
		if strings.Count(source, "/") == 1 {
			source = DefaultRegistry + "/" + source
		}
		out = append(out, ProviderRequirement{Name: name, Source: strings.ToLower(source), Constraints: strings.Join(req.VersionConstraints, ", ")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ModuleSources lists the sources of the module calls in the module's top-level files.
func ModuleSources(files map[string][]byte) ([]string, error) {
	mod, err := inspectFiles(files)
	if err != nil {
		return nil, fmt.Errorf("read module calls: %w", err)
	}
	out := make([]string, 0, len(mod.ModuleCalls))
	for _, call := range mod.ModuleCalls {
		out = append(out, call.Source)
	}
	sort.Strings(out)
	return out, nil
}

// ProviderSources are where the controller's terraform installs providers from.
type ProviderSources struct {
	// Mirror is a filesystem mirror directory.
	Mirror string
	// NetworkMirror is the URL of a provider network mirror.
	NetworkMirror string
	// Direct means registry downloads are allowed: any provider may be available.
	Direct bool
	// Host is the registry sources without a host mean to the controller's binary
	// (RegistryHost); empty means DefaultRegistry. Mirrors are read under it.
	Host string
	// Client fetches the network mirror's indexes; nil means a client with a 10 s timeout.
	Client *http.Client
}

// Unavailable returns one sentence for every requirement that no source offers in a
// version meeting its constraints. With registry downloads allowed it checks nothing.
func (s ProviderSources) Unavailable(ctx context.Context, reqs []ProviderRequirement) []string {
	if s.Direct {
		return nil
	}
	var problems []string
	for _, r := range reqs {
		versions, err := s.versions(ctx, r.Source)
		if err != nil {
			problems = append(problems, fmt.Sprintf("provider %s: %v", r.Source, err))
			continue
		}
		if ok, err := anyMeets(versions, r.Constraints); err != nil {
			problems = append(problems, fmt.Sprintf("provider %s: version constraint %q: %v", r.Source, r.Constraints, err))
		} else if !ok {
			problems = append(problems, missing(r, versions))
		}
	}
	return problems
}

func missing(r ProviderRequirement, versions []string) string {
	want := ""
	if r.Constraints != "" {
		want = " " + r.Constraints
	}
	if len(versions) == 0 {
		return fmt.Sprintf("provider %s%s is not in the provider mirror", r.Source, want)
	}
	return fmt.Sprintf("provider %s%s is not in the provider mirror (it holds %s)", r.Source, want, strings.Join(versions, ", "))
}

// versions lists the versions of source (host/namespace/type) that the mirrors hold.
// RequiredProviders writes sources without a host under DefaultRegistry; OpenTofu reads
// them, and so its mirror holds them, under its own registry.
func (s ProviderSources) versions(ctx context.Context, source string) ([]string, error) {
	if rest, ok := strings.CutPrefix(source, DefaultRegistry+"/"); ok && s.Host != "" {
		source = s.Host + "/" + rest
	}
	seen := map[string]bool{}
	if s.Mirror != "" {
		for _, v := range mirrorVersions(s.Mirror, source) {
			seen[v] = true
		}
	}
	if s.NetworkMirror != "" {
		vs, err := s.networkVersions(ctx, source)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			seen[v] = true
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out, nil
}

// mirrorVersions reads a filesystem mirror, unpacked (<source>/<version>/<os_arch>/) or
// packed (<source>/terraform-provider-<type>_<version>_<os>_<arch>.zip).
func mirrorVersions(mirror, source string) []string {
	dir := filepath.Join(mirror, filepath.FromSlash(source))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	typ := source[strings.LastIndex(source, "/")+1:]
	var out []string
	for _, e := range entries {
		if e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			out = append(out, e.Name())
			continue
		}
		rest, ok := strings.CutPrefix(e.Name(), "terraform-provider-"+typ+"_")
		if v, _, found := strings.Cut(rest, "_"); ok && found && strings.HasSuffix(rest, ".zip") {
			out = append(out, v)
		}
	}
	return out
}

// networkVersions reads <mirror>/<source>/index.json (the network mirror protocol).
func (s ProviderSources) networkVersions(ctx context.Context, source string) ([]string, error) {
	c := s.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	url := strings.TrimSuffix(s.NetworkMirror, "/") + "/" + source + "/index.json"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("network mirror: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("network mirror: GET %s: %s", url, resp.Status)
	}
	var index struct {
		Versions map[string]json.RawMessage `json:"versions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&index); err != nil {
		return nil, fmt.Errorf("network mirror: %s: %w", url, err)
	}
	out := make([]string, 0, len(index.Versions))
	for v := range index.Versions {
		out = append(out, v)
	}
	return out, nil
}

// anyMeets reports whether one of versions meets constraints ("" means any).
func anyMeets(versions []string, constraints string) (bool, error) {
	if constraints == "" {
		return len(versions) > 0, nil
	}
	cs, err := version.NewConstraint(constraints)
	if err != nil {
		return false, err
	}
	for _, v := range versions {
		if pv, err := version.NewVersion(v); err == nil && cs.Check(pv) {
			return true, nil
		}
	}
	return false, nil
}

// configFree are the providers that work without a provider block.
var configFree = []string{"hashicorp/random", "hashicorp/null", "hashicorp/local", "hashicorp/time", "hashicorp/tls",
	"hashicorp/archive", "hashicorp/external", "hashicorp/cloudinit", "hashicorp/http"}

// NeedsConfiguration reports whether the provider at source (with or without its
// registry host) takes configuration: all but a few of HashiCorp's utility providers
// (random, null, local, time, tls, archive, external, cloudinit, http) do.
func NeedsConfiguration(source string) bool {
	s := strings.ToLower(source)
	for _, host := range []string{DefaultRegistry + "/", "registry.opentofu.org/"} {
		s = strings.TrimPrefix(s, host)
	}
	return !slices.Contains(configFree, s)
}
