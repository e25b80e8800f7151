package module

import (
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// IsLocalSource reports whether a module call's source is a path in the same tree
// (./x or ../x), which terraform reads from the files next to the caller.
func IsLocalSource(source string) bool {
	return strings.HasPrefix(source, "./") || strings.HasPrefix(source, "../")
}

// LocalModules lists the directories (slash-separated, "." for the top of the tree) of
// the module and every local module it calls, directly or not, in its Tree, and says what
// is wrong with the calls: a local source outside the files (of the module, or of the
// whole source when the module keeps it), or one with no configuration.
func (m *Module) LocalModules() (dirs []string, problems []string) {
	outside := "the module's files"
	if m.Dir != "" {
		outside = "the module source's files"
	}
	for _, c := range m.walkCalls() {
		switch {
		case c.problem != "":
			problems = append(problems, c.problem)
		case c.outside:
			problems = append(problems, fmt.Sprintf("%s calls %s, outside %s", c.where, c.source, outside))
		case c.missing:
			problems = append(problems, fmt.Sprintf("%s calls %s, which is not among the module's files", c.where, c.source))
		case c.remote:
		case c.dir != "":
			dirs = append(dirs, c.dir)
		}
	}
	sort.Strings(problems)
	return dirs, problems
}

// localCall is a directory walkCalls reached, or what is wrong with a call.
type localCall struct {
	dir              string   // a directory reached, tree-relative
	types            []string // the resource types (managed and data) dir declares
	where, source    string   // the call, for messages
	outside, missing bool
	remote           bool   // a call of a module from elsewhere (registry, git, ...)
	problem          string // a directory that cannot be read
}

// walkCalls walks the module's Tree from the module's directory through its local module
// calls: each directory reached once, and each call that leaves the tree or finds no
// configuration.
func (m *Module) walkCalls() []localCall {
	tree, start := m.Files, "."
	if m.Dir != "" {
		tree, start = m.Tree(), m.Dir
	}
	seen := map[string]bool{start: true}
	queue := []string{start}
	var out []localCall
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		mod, err := inspectFiles(subtree(tree, dir))
		if err != nil {
			out = append(out, localCall{dir: dir}, localCall{problem: fmt.Sprintf("%s: %v", m.relative(dir), err)})
			continue
		}
		reached := localCall{dir: dir}
		for _, r := range mod.ManagedResources {
			reached.types = append(reached.types, r.Type)
		}
		for _, r := range mod.DataResources {
			reached.types = append(reached.types, r.Type)
		}
		out = append(out, reached)
		for _, c := range mod.ModuleCalls {
			if !IsLocalSource(c.Source) {
				out = append(out, localCall{where: "module " + c.Name, source: c.Source, remote: true})
				continue
			}
			target := path.Clean(path.Join(dir, c.Source))
			where := "module " + c.Name
			if dir != start {
				where = m.relative(dir) + ": " + where
			}
			switch {
			case target == ".." || strings.HasPrefix(target, "../"):
				out = append(out, localCall{where: where, source: c.Source, outside: true})
			case !hasConfig(tree, target):
				out = append(out, localCall{where: where, source: c.Source, missing: true})
			case !seen[target]:
				seen[target] = true
				queue = append(queue, target)
			}
		}
	}
	return out
}

// relative names a tree directory as seen from the module's own: "." for it, x for
// a directory below it, ../x for one outside it.
func (m *Module) relative(dir string) string {
	if m.Dir == "" {
		return dir
	}
	if rel, err := filepath.Rel(m.Dir, dir); err == nil {
		return filepath.ToSlash(rel)
	}
	return dir
}

// subtree is the files below dir, with paths relative to it ("." is all of them).
func subtree(files map[string][]byte, dir string) map[string][]byte {
	if dir == "." {
		return files
	}
	out := map[string][]byte{}
	for name, content := range files {
		if rest, ok := strings.CutPrefix(name, dir+"/"); ok {
			out[rest] = content
		}
	}
	return out
}

// hasConfig reports whether dir holds a .tf or .tf.json file of its own.
func hasConfig(files map[string][]byte, dir string) bool {
	for name := range files {
		rest, ok := strings.CutPrefix(name, dir+"/")
		if dir == "." {
			rest, ok = name, true
		}
		if ok && !strings.Contains(rest, "/") && (strings.HasSuffix(rest, ".tf") || strings.HasSuffix(rest, ".tf.json")) {
			return true
		}
	}
	return false
}

// AllRequiredProviders lists the providers the root module and the local modules it
// calls require, one entry per source (the root's local name kept); the root's version
// constraints are kept, a submodule's added.
func (m *Module) AllRequiredProviders() ([]ProviderRequirement, error) {
	dirs, _ := m.LocalModules()
	tree := m.Files
	if m.Dir != "" {
		tree = m.Tree()
	}
	bySource := map[string]*ProviderRequirement{}
	var order []string
	for _, dir := range dirs {
		reqs, err := RequiredProviders(subtree(tree, dir))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.relative(dir), err)
		}
		for _, r := range reqs {
			have, ok := bySource[r.Source]
			switch {
			case !ok:
				r := r
				bySource[r.Source] = &r
				order = append(order, r.Source)
			case r.Constraints != "" && !strings.Contains(have.Constraints, r.Constraints):
				have.Constraints = strings.TrimPrefix(have.Constraints+", "+r.Constraints, ", ")
			}
		}
	}
	out := make([]ProviderRequirement, 0, len(order))
	for _, s := range order {
		out = append(out, *bySource[s])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
