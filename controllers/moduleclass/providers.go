package moduleclass

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

// Reasons of the provider checks.
const (
	// ReasonProviderUnavailable: a provider the module requires is in no provider source.
	ReasonProviderUnavailable = "ProviderUnavailable"
	// ReasonProviderNotConfigured: a provider the module requires is configured by no
	// ProviderConfig the class names.
	ReasonProviderNotConfigured = "ProviderNotConfigured"
)

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

// unconfigured names the providers the module (with its local modules) requires that no
// ProviderConfig the class names configures, and the ProviderConfigs it names that do
// not exist.
func (r *Reconciler) unconfigured(ctx context.Context, class *terraformv1.ModuleClass, m *module.Module) ([]string, error) {
	reqs, err := m.AllRequiredProviders()
	if err != nil {
		return nil, resource.UserErrorf(ReasonInvalid, "%v", err)
	}
	var problems []string
	configured := map[string]bool{}
	for _, name := range providerConfigsOf(class.SpecTemplate) {
		pc := &terraformv1.ProviderConfig{}
		err := r.client.Get(ctx, types.NamespacedName{Namespace: class.Namespace, Name: name}, pc)
		switch {
		case apierrors.IsNotFound(err):
			problems = append(problems, fmt.Sprintf("%s %s/%s does not exist", terraformv1.ProviderConfigResource, class.Namespace, name))
		case err != nil:
			return nil, fmt.Errorf("get provider config: %w", err)
		case pc.Annotations[terraformv1.StubAnnotation] != "":
			problems = append(problems, fmt.Sprintf("%s %s/%s is a stub to fill in (claim generate wrote it): set its config and credentials, then remove the annotation %s",
				terraformv1.ProviderConfigResource, class.Namespace, name, terraformv1.StubAnnotation))
		default:
			configured[fullSource(pc.Spec.Source)] = true
		}
	}
	for _, req := range reqs {
		if !configured[req.Source] && module.NeedsConfiguration(req.Source) {
			problems = append(problems, fmt.Sprintf("the module needs provider %s (%q), which no ProviderConfig (%s) the class names configures: create one with source %s and name it in specTemplate.providerConfigRefs",
				req.Source, req.Name, terraformv1.ProviderConfigResource, strings.TrimPrefix(req.Source, module.DefaultRegistry+"/")))
		}
	}
	return problems, nil
}

// fullSource is a provider source with its registry host, as RequiredProviders writes it.
func fullSource(s string) string {
	s = strings.ToLower(s)
	if strings.Count(s, "/") == 1 {
		return module.DefaultRegistry + "/" + s
	}
	return s
}
