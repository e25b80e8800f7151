package module

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// IsLocalSource reports whether a module call's source is a path in the same tree
// (./x or ../x), which terraform reads from the files next to the caller.
func IsLocalSource(source string) bool {
	return strings.HasPrefix(source, "./") || strings.HasPrefix(source, "../")
}

// LocalModules lists the directories (slash-separated, "." for the root) of the root
// module and every local module it calls, directly or not, and says what is wrong with
// the calls: a local source outside the module's files, or one with no configuration.
func (m *Module) LocalModules() (dirs []string, problems []string) {
	seen := map[string]bool{".": true}
	queue := []string{"."}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		dirs = append(dirs, dir)
		mod, err := inspectFiles(subtree(m.Files, dir))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", dir, err))
			continue
		}
		for _, c := range mod.ModuleCalls {
			if !IsLocalSource(c.Source) {
				continue
			}
			target := path.Clean(path.Join(dir, c.Source))
			where := "module " + c.Name
			if dir != "." {
				where = dir + ": " + where
			}
			switch {
			case target == ".." || strings.HasPrefix(target, "../"):
				problems = append(problems, fmt.Sprintf("%s calls %s, outside the module's files", where, c.Source))
			case !hasConfig(m.Files, target):
				problems = append(problems, fmt.Sprintf("%s calls %s, which is not among the module's files", where, c.Source))
			case !seen[target]:
				seen[target] = true
				queue = append(queue, target)
			}
		}
	}
	sort.Strings(problems)
	return dirs, problems
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
	bySource := map[string]*ProviderRequirement{}
	var order []string
	for _, dir := range dirs {
		reqs, err := RequiredProviders(subtree(m.Files, dir))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
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
