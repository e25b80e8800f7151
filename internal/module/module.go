package module

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/hashicorp/terraform-config-inspect/tfconfig"
)

// Variable is one input variable of a module.
type Variable struct {
	// Name of the variable.
	Name string `json:"name"`
	// Type is the type constraint as written, e.g. "map(string)"; empty means any.
	Type string `json:"type,omitempty"`
	// Default is the default value as JSON; nil means the variable is required.
	Default json.RawMessage `json:"default,omitempty"`
	// Required is true when the variable has no default.
	Required bool `json:"required"`
	// Sensitive marks variables whose values Terraform hides.
	Sensitive bool `json:"sensitive,omitempty"`
	// Description as written in the module.
	Description string `json:"description,omitempty"`
}

// Output is one output of a module.
type Output struct {
	// Name of the output.
	Name string `json:"name"`
	// Sensitive outputs go only to connection Secrets.
	Sensitive bool `json:"sensitive,omitempty"`
	// Description as written in the module.
	Description string `json:"description,omitempty"`
}

// Module is a Terraform module's files and interface.
type Module struct {
	// Files maps a slash-separated path inside the module to its content.
	Files map[string][]byte
	// Variables sorted by name.
	Variables []Variable
	// Outputs sorted by name.
	Outputs []Output
	// Calls are the module blocks of the top-level files, sorted by name.
	Calls []Call
	// Lock is the module's dependency lock file (LockFile at its top level), kept out of
	// Files: it is what the module's workspaces install providers by, not a module file.
	// Nil when the module ships none.
	Lock []byte
	// Dir is where the module lives in the source tree it was read from (slash-separated)
	// when it calls local modules outside its own directory (../x); "" otherwise.
	Dir string
	// Outside holds the files of that source tree outside Dir (paths from the tree's top),
	// which those calls read; nil without Dir.
	Outside map[string][]byte
}

// LockFile is the name of terraform's dependency lock file.
const LockFile = ".terraform.lock.hcl"

// Call is a module block: the name and the source it calls.
type Call struct {
	// Name is the block's label.
	Name string
	// Source is the module source as written, e.g. ./modules/vpc.
	Source string
}

// Variable returns the variable called name.
func (m *Module) Variable(name string) (Variable, bool) {
	for _, v := range m.Variables {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

// Output returns the output called name.
func (m *Module) Output(name string) (Output, bool) {
	for _, o := range m.Outputs {
		if o.Name == name {
			return o, true
		}
	}
	return Output{}, false
}

// Load reads the module rooted at dir in fsys: every file below it that Kept allows,
// and the variables and outputs of its top-level .tf and .tf.json files.
func Load(fsys fs.FS, dir string) (*Module, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := relative(dir, p)
		if d.IsDir() {
			if rel != "" && !Kept(rel+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if !Kept(rel) {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		files[rel] = b
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read module %s: %w", dir, err)
	}
	return FromFiles(files)
}

// relative is p's path below dir ("" for dir itself).
func relative(dir, p string) string {
	switch {
	case p == dir:
		return ""
	case dir == ".":
		return p
	}
	return strings.TrimPrefix(p, dir+"/")
}

// FromFiles builds a Module from files already in memory (slash-separated paths),
// leaving out what Kept refuses; a top-level LockFile becomes the module's Lock.
// A tree that Tree wrote (with DirFile) reads back as the module it was.
func FromFiles(files map[string][]byte) (*Module, error) {
	if m, marked, err := fromMarkedTree(files); marked {
		return m, err
	}
	m := &Module{Files: map[string][]byte{}}
	for name, content := range files {
		switch {
		case name == LockFile:
			m.Lock = content
		case Kept(name):
			m.Files[name] = content
		}
	}
	return m, m.inspect()
}

// Kept says whether a path (slash-separated; a directory ends in "/") belongs to a module:
// state and its backups, with every secret in them, never do, nor anything under .git,
// .terraform or terraform.tfstate.d.
func Kept(name string) bool {
	for _, part := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if part == ".git" || part == ".terraform" || part == "terraform.tfstate.d" {
			return false
		}
	}
	return !strings.HasSuffix(name, ".tfstate") && !strings.HasSuffix(name, ".tfstate.backup")
}

// inspect reads the variables and outputs of the module's top-level .tf and .tf.json
// files with terraform-config-inspect.
func (m *Module) inspect() error {
	mod, err := inspectFiles(m.Files)
	if err != nil {
		return err
	}
	m.Variables, m.Outputs, m.Calls = nil, nil, nil
	for _, v := range mod.Variables {
		out := Variable{Name: v.Name, Type: v.Type, Required: v.Required, Sensitive: v.Sensitive, Description: v.Description}
		if !v.Required && v.Default != nil {
			raw, err := json.Marshal(v.Default)
			if err != nil {
				return fmt.Errorf("variable %q: default: %w", v.Name, err)
			}
			out.Default = raw
		}
		m.Variables = append(m.Variables, out)
	}
	for _, o := range mod.Outputs {
		m.Outputs = append(m.Outputs, Output{Name: o.Name, Sensitive: o.Sensitive, Description: o.Description})
	}
	for _, c := range mod.ModuleCalls {
		m.Calls = append(m.Calls, Call{Name: c.Name, Source: c.Source})
	}
	sort.Slice(m.Calls, func(i, j int) bool { return m.Calls[i].Name < m.Calls[j].Name })
	sort.Slice(m.Variables, func(i, j int) bool { return m.Variables[i].Name < m.Variables[j].Name })
	sort.Slice(m.Outputs, func(i, j int) bool { return m.Outputs[i].Name < m.Outputs[j].Name })
	return nil
}

// parseFiles loads the top-level configuration files among files with
// terraform-config-inspect; a directory without any, or with errors, is refused.
func parseFiles(files map[string][]byte) (*tfconfig.Module, error) {
	fsys := fstest.MapFS{}
	for name, content := range files {
		fsys[name] = &fstest.MapFile{Data: content, Mode: 0o644}
	}
	wrapped := tfconfig.WrapFS(fsys)
	if !tfconfig.IsModuleDirOnFilesystem(wrapped, ".") {
		return nil, fmt.Errorf("module has no .tf or .tf.json files")
	}
	mod, diags := tfconfig.LoadModuleFromFilesystem(wrapped, ".")
	if diags.HasErrors() {
		return nil, fmt.Errorf("parse module: %s", describe(diags))
	}
	return mod, nil
}

// describe writes the error diagnostics one after the other, each with its place.
func describe(diags tfconfig.Diagnostics) string {
	var out []string
	for _, d := range diags {
		if d.Severity != tfconfig.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Pos != nil {
			msg = fmt.Sprintf("%s:%d: %s", strings.TrimPrefix(d.Pos.Filename, "./"), d.Pos.Line, msg)
		}
		out = append(out, msg)
	}
	return strings.Join(out, "; ")
}
