package kinds

import (
	"fmt"

	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// templateClass is a non-portable class whose specTemplate.forProvider is typed
// (every class hack/kindgen generates).
type templateClass interface {
	resource.NonPortableClass
	// GetForProviderTemplate returns the module inputs new resources start with.
	GetForProviderTemplate() (map[string]any, error)
}

// configurator turns a typed fill function into a registry.Configurator: the new managed
// resource starts with the class's forProvider, and fill maps the claim's portable fields
// onto it (refusing, as a *resource.UserError, what the class cannot give).
func configurator[CL resource.Claim, CS templateClass, MG resource.Managed](fill func(claim CL, class CS, mg MG) error) registry.Configurator {
	return func(req registry.Request, mg resource.Managed) error {
		claim, ok1 := req.Claim.(CL)
		class, ok2 := req.Class.(CS)
		m, ok3 := mg.(MG)
		if !ok1 || !ok2 || !ok3 {
			return fmt.Errorf("configure %T from %T and %T: unexpected types", mg, req.Claim, req.Class)
		}
		values, err := class.GetForProviderTemplate()
		if err != nil {
			return fmt.Errorf("read %s/%s forProvider: %w", class.GetNamespace(), class.GetName(), err)
		}
		if err := m.SetForProvider(values); err != nil {
			return fmt.Errorf("start forProvider from class %s/%s: %w", class.GetNamespace(), class.GetName(), err)
		}
		return fill(claim, class, m)
	}
}
