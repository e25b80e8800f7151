package moduleclass

import (
	"context"
	"strings"

	"terraplane.io/terraplane/internal/module"
)

// ReasonProviderUnavailable: a provider the module requires is in no provider source.
const ReasonProviderUnavailable = "ProviderUnavailable"

// Option configures the ModuleClass controller.
type Option func(*Reconciler)

// WithProviderSources makes the controller check that the providers a module requires
// are available where the controller's terraform installs them from.
func WithProviderSources(s module.ProviderSources) Option {
	return func(r *Reconciler) { r.providers = &s }
}

// providerProblems says which of the module's required providers no source offers;
// empty when all are available or no sources were configured.
func (r *Reconciler) providerProblems(ctx context.Context, m *module.Module) string {
	if r.providers == nil {
		return ""
	}
	reqs, err := module.RequiredProviders(m.Files)
	if err != nil {
		return err.Error()
	}
	return strings.Join(r.providers.Unavailable(ctx, reqs), "; ")
}
