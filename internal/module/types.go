package module

import (
	"slices"
	"sort"
)

// DeclaredTypes lists the resource types (managed and data) that the module and the
// local modules it calls declare, sorted. complete is false when the list may miss
// some: a module in the tree calls one from elsewhere (a registry, git, an archive),
// whose types only terraform init would show, or a call or a file is broken.
func (m *Module) DeclaredTypes() (types []string, complete bool) {
	complete = true
	for _, c := range m.walkCalls() {
		types = append(types, c.types...)
		if c.remote || c.outside || c.missing || c.problem != "" {
			complete = false
		}
	}
	sort.Strings(types)
	return slices.Compact(types), complete
}
