package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"

	"terraplane.io/terraplane/internal/plugins"
)

// prepareWithProviders is prepare for the verbs that run providers (plan, apply,
// destroy, show): it also lends the workspace warm provider processes, if the pool has
// any to lend (provider reuse on), for as long as the slot is held.
//
// A workspace that must init first has its providers started meanwhile (startEarly).
func (e *Engine) prepareWithProviders(ctx context.Context, ws Workspace) (*tfexec.Terraform, func(), error) {
	var early *earlyStart
	tf, done, err := e.prepareWith(ctx, ws, func() { early = e.startEarly(ctx, ws) })
	types := e.namedTypes(ws)
	defer func() { early.end(types) }()
	if err != nil {
		return tf, done, err
	}
	providers, err := installedProviders(e.Dir(ws.ID))
	if err != nil {
		done() // the caller has no slot to give back
		return nil, nil, err
	}
	if len(providers) == 0 {
		return tf, done, nil
	}
	lease, err := e.plugins.Acquire(ctx, providers, e.env(ws), providerConfig(ws), types)
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("provider processes: %w", err)
	}
	e.mu.Lock()
	e.lent[ws.ID] = lease
	e.mu.Unlock()
	return tf, func() {
		e.mu.Lock()
		delete(e.lent, ws.ID)
		e.mu.Unlock()
		lease.Release(ctx.Err() == nil) // a provider told to stop is not used again
		done()
	}, nil
}

// runOptions adds to a command's options what the engine gives every run: where
// terraform reaches the providers lent to ws, if any, and -lock=false when the engine
// holds ws's state lock itself.
func runOptions[O any](e *Engine, ws Workspace, opts ...O) []O {
	e.mu.Lock()
	var info tfexec.ReattachInfo
	if lease := e.lent[ws.ID]; lease != nil {
		info = lease.Reattach
	}
	e.mu.Unlock()
	if o, ok := any(tfexec.Reattach(info)).(O); ok && info != nil {
		opts = append(opts, o)
	}
	if o, ok := any(tfexec.Lock(false)).(O); ok && e.locksItself(ws) {
		opts = append(opts, o)
	}
	return opts
}

// installedProviders lists the providers init installed in dir, each by its address and
// real binary (symlinks resolved, so workspaces sharing a mirror share processes).
func installedProviders(dir string) ([]plugins.Provider, error) {
	root := filepath.Join(dir, dataDir, "providers")
	// <host>/<namespace>/<type>/<version>/<os_arch>/terraform-provider-<type>*
	matches, err := filepath.Glob(filepath.Join(root, "*", "*", "*", "*", "*", "terraform-provider-*"))
	if err != nil {
		return nil, err
	}
	var out []plugins.Provider
	for _, m := range matches {
		rel, _ := filepath.Rel(root, m)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		bin, err := filepath.EvalSymlinks(m)
		if err != nil {
			return nil, fmt.Errorf("provider binary %s: %w", m, err)
		}
		if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			continue
		}
		out = append(out, plugins.Provider{Address: strings.Join(parts[:3], "/"), Binary: bin})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out, nil
}

// providerConfig is what of ws configures its providers, resolved: the root module's
// provider blocks with the values they read (the provider settings file, and any variable
// of the tfvars they name), every module file, and the values read from Secrets. Other
// input values and the backend, which differ between workspaces of one class, are left
// out, unless a module file holds a provider block of its own: any input may then
// configure a provider, and every value is part of the key. (The environment, credentials included, is part of the key too.)
// A provider keeps one configuration per process, so two runs whose providers are
// configured differently must never share one.
func providerConfig(ws Workspace) []byte {
	var out []byte
	var read []string // the variables the root module's provider blocks read
	ownProviders := false
	for _, name := range slices.Sorted(maps.Keys(ws.Files)) {
		switch name {
		case varsFile:
		case rootFile:
			var root struct {
				Provider json.RawMessage `json:"provider"`
			}
			_ = json.Unmarshal(ws.Files[name], &root)
			out = append(out, root.Provider...)
			for _, m := range variableRef.FindAllSubmatch(root.Provider, -1) {
				read = append(read, string(m[1]))
			}
		default:
			ownProviders = ownProviders || configFile(name) && providerBlock.Match(ws.Files[name])
			out = append(out, name...)
			out = append(out, 0)
			out = append(out, ws.Files[name]...)
		}
	}
	out = append(out, providerValues(ws.Files[varsFile], read, ownProviders)...)
	secrets, _ := json.Marshal(ws.SecretVars) // keys sorted
	return append(out, secrets...)
}

// Names of the files render writes that the engine reads.
const (
	rootFile      = "main.tf.json"
	varsFile      = "terraform.tfvars.json"
	providersFile = "terraplane-providers.json"
)

// valuesFile reports whether a workspace file holds values (inputs or provider settings),
// which neither init nor the choice of provider types depends on.
func valuesFile(name string) bool {
	return name == varsFile || name == providersFile
}

// variableRef matches a reference to a root module variable in configuration.
var variableRef = regexp.MustCompile(`\bvar\.([A-Za-z_][A-Za-z0-9_-]*)`)

// configFile reports whether terraform reads the file as configuration.
func configFile(name string) bool {
	return strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json")
}

// providerBlock matches a provider block in a module file, HCL or JSON.
var providerBlock = regexp.MustCompile(`(?m)^\s*provider\s+"|"provider"\s*:`)

// providerValues are the input values that may configure a provider: those of the
// variables named, or with all every value. Unreadable values count whole.
func providerValues(tfvars []byte, names []string, all bool) []byte {
	if all || len(tfvars) == 0 {
		return tfvars
	}
	var vars map[string]json.RawMessage
	if err := json.Unmarshal(tfvars, &vars); err != nil {
		return tfvars
	}
	maps.DeleteFunc(vars, func(name string, _ json.RawMessage) bool { return !slices.Contains(names, name) })
	out, _ := json.Marshal(vars) // keys sorted
	return out
}

// fullSchemaFile marks a workspace whose runs are told of every type of their providers:
// its state held a type that its files do not name.
const fullSchemaFile = ".terraplane-full-schema"

// identifier matches the words of a configuration, type names among them.
var identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_-]*`)

// namedTypes are the words of ws's configuration (its files but the input values, and
// the modules init installed): every resource and data source type it uses is among
// them, and a provider need tell terraform of no other. Nil means every type, for a
// workspace marked with fullSchemaFile.
func (e *Engine) namedTypes(ws Workspace) []string {
	dir := e.Dir(ws.ID)
	if _, err := os.Stat(filepath.Join(dir, fullSchemaFile)); err == nil {
		return nil
	}
	words := map[string]bool{}
	collect := func(b []byte) {
		for _, w := range identifier.FindAll(b, -1) {
			words[string(w)] = true
		}
	}
	for name, b := range ws.Files {
		if !valuesFile(name) {
			collect(b)
		}
	}
	_ = filepath.WalkDir(filepath.Join(dir, dataDir, "modules"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".tf") || strings.HasSuffix(p, ".tf.json")) {
			if b, err := os.ReadFile(p); err == nil {
				collect(b)
			}
		}
		return nil
	})
	return slices.Sorted(maps.Keys(words))
}

// schemaMissing matches terraform's error about a type in state that its provider did
// not describe.
var schemaMissing = regexp.MustCompile(`no schema available for \S+ while reading state`)

// describingAll runs verb, and runs it again with every type of the providers described
// when terraform missed the schema of a type that only the state holds (a resource the
// configuration no longer has): terraform stops at that before it changes anything.
// The workspace keeps every type described from then on. (Without provider reuse
// terraform is told of every type already: the second run fails alike, once.)
func describingAll[T any](e *Engine, ws Workspace, verb func() (T, error)) (T, error) {
	v, err := verb()
	if err == nil || !schemaMissing.MatchString(err.Error()) {
		return v, err
	}
	marker := filepath.Join(e.Dir(ws.ID), fullSchemaFile)
	if _, serr := os.Stat(marker); serr == nil {
		return v, err // every type was described already
	}
	if werr := os.WriteFile(marker, nil, 0o600); werr != nil {
		return v, err
	}
	return verb()
}
