package revision

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Overlays keeps the last overlay (see Overlay) made of each class. The claims of a
// class are reconciled many times between two writes of the class, and each would
// otherwise convert the whole class twice to read the same revision.
type Overlays struct {
	mu   sync.Mutex
	last map[types.UID]overlay
}

// overlay is one class at one revision, made from the versions key names.
type overlay struct {
	key   string
	class resource.NonPortableClass
}

// Overlay is Overlay(class, rev, newClass): a copy of the one made last for the same
// versions of class and rev, or a new one. A nil Overlays makes a new one each time.
func (o *Overlays) Overlay(class Class, rev *terraformv1.ClassRevision, newClass func() resource.NonPortableClass) (resource.NonPortableClass, error) {
	key := fmt.Sprintf("%s/%s/%s", class.GetResourceVersion(), rev.Name, rev.GetResourceVersion())
	if o == nil || class.GetResourceVersion() == "" || rev.GetResourceVersion() == "" {
		return Overlay(class, rev, newClass)
	}
	o.mu.Lock()
	last, ok := o.last[class.GetUID()]
	o.mu.Unlock()
	if ok && last.key == key {
		return last.class.DeepCopyObject().(resource.NonPortableClass), nil
	}
	out, err := Overlay(class, rev, newClass)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	if o.last == nil {
		o.last = map[types.UID]overlay{}
	}
	o.last[class.GetUID()] = overlay{key: key, class: out.DeepCopyObject().(resource.NonPortableClass)}
	o.mu.Unlock()
	return out, nil
}
