package registry

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/resource"
)

// Variables are module variables a resource takes from ConfigMaps (Plain, rendered like
// forProvider) and Secrets (Secret: sensitive, never left in a file), as read: JSON for
// lists, maps and objects, text otherwise.
type Variables struct {
	// Plain maps a module variable to a value read from a ConfigMap.
	Plain map[string]string
	// Secret maps a module variable to a value read from a Secret.
	Secret map[string]string
	// Sources identify what the values were read from (kind/name@resourceVersion), so a
	// changed key changes the workspace hash without the hash covering a secret value.
	Sources []string
}

// VariableResolver reads the Secret and ConfigMap keys a managed resource's variables
// come from. A missing object or key is a *resource.UserError.
type VariableResolver func(ctx context.Context, c client.Client, mg resource.Managed) (*Variables, error)
