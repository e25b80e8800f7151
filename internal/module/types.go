package module

import (
	"slices"
	"sort"
)

// DeclaredTypes lists the resource types (managed and data) that the module and the
// local modules it calls declare, sorted. complete is false when the list may miss
// some: a module in the tree calls one from elsewhere (a registry, git, an archive),
// whose types only terraform init would show, or a file does not parse.
func (m *Module) DeclaredTypes() (types []string, complete bool) {
	dirs, problems := m.LocalModules()
	complete = len(problems) == 0
	seen := map[string]bool{}
	for _, dir := range dirs {
		mod, err := inspectFiles(subtree(m.Files, dir))
		if err != nil {
			complete = false
			continue
		}
		for _, c := range mod.ModuleCalls {
			if !IsLocalSource(c.Source) {
				complete = false
			}
		}
		for _, r := range mod.ManagedResources {
			seen[r.Type] = true
		}
		for _, r := range mod.DataResources {
			seen[r.Type] = true
		}
	}
	for t := range seen {
		types = append(types, t)
	}
	sort.Strings(types)
	return slices.Clip(types), complete
}
