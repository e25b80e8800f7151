package revision

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
)

// Modules reads the modules of revisions, each once: a revision never changes, so its
// module, unpacked and inspected, is kept by the revision's UID. At most max are kept.
type Modules struct {
	mu   sync.Mutex
	max  int
	kept map[types.UID]*module.Module
}

// NewModules keeps at most max modules (0: 256).
func NewModules(max int) *Modules {
	if max <= 0 {
		max = 256
	}
	return &Modules{max: max, kept: map[types.UID]*module.Module{}}
}

// Module is rev's module, with rev's provider lock as its Lock. Callers must not change it.
func (m *Modules) Module(rev *terraformv1.ClassRevision) (*module.Module, error) {
	m.mu.Lock()
	mod, ok := m.kept[rev.UID]
	m.mu.Unlock()
	if ok && rev.UID != "" {
		return mod, nil
	}
	files, err := modsource.ReadTarball(rev.Spec.Module)
	if err != nil {
		return nil, fmt.Errorf("the module of revision %s: %w", rev.Name, err)
	}
	if mod, err = module.FromFiles(files); err != nil {
		return nil, fmt.Errorf("the module of revision %s: %w", rev.Name, err)
	}
	if rev.Spec.ProviderLock != "" {
		mod.Lock = []byte(rev.Spec.ProviderLock)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.kept) >= m.max {
		clear(m.kept) // revisions are few and small: starting over is cheap
	}
	m.kept[rev.UID] = mod
	return mod, nil
}
