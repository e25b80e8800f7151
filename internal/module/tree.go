package module

import (
	"maps"
	"strings"
)

// DirFile is a file at the top of a module's Tree that names the directory the module
// lives in (Dir), so that a tree packed into an archive (a class revision's, say) reads
// back as the same module.
const DirFile = ".terraplane-module-dir"

// FromTree builds the module at dir (slash-separated, "" or "." for the top) of a source
// tree's files: its own files, and, when it calls local modules outside dir (../x, as a
// submodule of a public module often calls its top-level module), the rest of the tree,
// as terraform's own module installer keeps the whole source. A call outside the tree
// itself stays a problem that LocalModules names.
func FromTree(files map[string][]byte, dir string) (*Module, error) {
	dir = strings.Trim(dir, "/")
	if dir == "." {
		dir = ""
	}
	m, err := FromFiles(subtree(files, orDot(dir)))
	if err != nil || dir == "" || !m.CallsOutside() {
		return m, err
	}
	m.Dir, m.Outside = dir, map[string][]byte{}
	for name, content := range files {
		if !strings.HasPrefix(name, dir+"/") && name != DirFile && Kept(name) {
			m.Outside[name] = content
		}
	}
	return m, nil
}

// Tree is the module's files as its source tree holds them: its own files below Dir, the
// files outside it, and DirFile naming Dir; without Dir, its files.
func (m *Module) Tree() map[string][]byte {
	if m.Dir == "" {
		return m.Files
	}
	out := maps.Clone(m.Outside)
	for name, content := range m.Files {
		out[m.Dir+"/"+name] = content
	}
	out[DirFile] = []byte(m.Dir)
	return out
}

// fromMarkedTree reads a tree that Tree wrote: the module at the directory DirFile names.
func fromMarkedTree(files map[string][]byte) (*Module, bool, error) {
	dir, ok := files[DirFile]
	if !ok {
		return nil, false, nil
	}
	m, err := FromTree(files, string(dir))
	return m, true, err
}

// CallsOutside reports whether a local module the module calls, directly or not, lies
// outside its own files (or, for a module that keeps its source tree, outside that).
func (m *Module) CallsOutside() bool {
	for _, c := range m.walkCalls() {
		if c.outside {
			return true
		}
	}
	return false
}

// orDot is dir, or "." for the top.
func orDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}
