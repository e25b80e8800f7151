package resource

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// Claim is implemented by every claim kind.
type Claim interface {
	client.Object
	// GetClaimSpec returns the shared claim spec.
	GetClaimSpec() *common.ClaimSpec
	// GetClaimStatus returns the shared claim status.
	GetClaimStatus() *common.ClaimStatus
}

// PortableClass is implemented by every portable class kind.
type PortableClass interface {
	client.Object
	// GetClassRef returns the non-portable class this class points at.
	GetClassRef() common.ClassReference
	// GetBindingMode returns when claims of this class are provisioned.
	GetBindingMode() common.BindingMode
}

// NonPortableClass is implemented by every non-portable class kind.
type NonPortableClass interface {
	client.Object
	// GetSpecTemplate returns the shared part of the spec template.
	GetSpecTemplate() *common.ClassSpecTemplate
	// GetAllowedNamespaces returns the namespaces whose portable classes may point at
	// this class (besides its own); nil allows none.
	GetAllowedNamespaces() *common.AllowedNamespaces
}

// Managed is implemented by every managed resource kind.
type Managed interface {
	client.Object
	// GetManagedSpec returns the shared managed spec.
	GetManagedSpec() *common.ManagedSpec
	// GetManagedStatus returns the shared managed status.
	GetManagedStatus() *common.ManagedStatus
	// GetForProvider returns spec.forProvider, the module inputs, as a JSON-shaped value.
	GetForProvider() (map[string]any, error)
	// SetForProvider replaces spec.forProvider with a JSON-shaped value.
	SetForProvider(values map[string]any) error
	// SetAtProvider records the non-sensitive outputs in status.atProvider.
	SetAtProvider(outputs map[string]any) error
}
