package moduleclass

import (
	"context"
	"strings"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/resource"
)

// check is one reconcile's working state, filled in by the phases.
type check struct {
	class  *terraformv1.ModuleClass
	orig   *terraformv1.ModuleClass
	loaded *modsource.Loaded
	// failed is the phase that stopped the check: it decides which conditions are False.
	failed string
	err    error
}

// Phases, named in conditions.
const (
	phaseLoad      = "load"
	phaseModule    = "module"
	phaseValidate  = "validate"
	phaseProviders = "providers"
	phaseConfigs   = "providerConfigs"
)

// ReasonModuleIncomplete: a local module the module calls is not among its files.
const ReasonModuleIncomplete = "ModuleIncomplete"

// load reads the module from its source and describes it in status.
func (r *Reconciler) load(ctx context.Context, c *check) error {
	c.failed = phaseLoad
	ld, err := r.loader.LoadSource(ctx, r.client, c.class.Namespace, c.class.SpecTemplate.Source)
	if err != nil {
		return err
	}
	c.loaded = ld
	st := &c.class.Status
	st.Variables, st.Outputs = modsource.Describe(ld.Module)
	st.Revision = ld.Revision
	return nil
}

// checkModule checks that every local module the module calls is among its files, so
// that terraform can initialise it.
func (r *Reconciler) checkModule(_ context.Context, c *check) error {
	c.failed = phaseModule
	if _, problems := c.loaded.Module.LocalModules(); len(problems) > 0 {
		return resource.UserErrorf(ReasonModuleIncomplete, "%s; ship the whole module directory: a ConfigMap with a module.tar.gz key (terraplane claim generate writes it), git or OCI (kubectl create configmap --from-file leaves subdirectories out)",
			strings.Join(problems, "; "))
	}
	return nil
}

// validate checks the class's inputs, fixed values and connection mapping against the
// module; the variables a defined claim kind's parameters supply count as supplied.
func (r *Reconciler) validate(ctx context.Context, c *check) error {
	c.failed = phaseValidate
	fromClaims, err := r.fromClaims(ctx, c.class, c.loaded.Module)
	if err != nil {
		return err
	}
	if err := modsource.Validate(c.loaded.Module, c.class.SpecTemplate, fromClaims...); err != nil {
		return resource.UserErrorf(ReasonInvalid, "%v", err)
	}
	return nil
}

// checkProviders checks that the providers the module requires can be installed.
func (r *Reconciler) checkProviders(ctx context.Context, c *check) error {
	c.failed = phaseProviders
	if msg := r.providerProblems(ctx, c.loaded.Module); msg != "" {
		return resource.UserErrorf(ReasonProviderUnavailable, "%s", strings.TrimSpace(msg))
	}
	return nil
}

// checkProviderConfigs checks that a ProviderConfig the class names configures every
// provider the module needs (but those that take no configuration).
func (r *Reconciler) checkProviderConfigs(ctx context.Context, c *check) error {
	c.failed = phaseConfigs
	problems, err := r.unconfigured(ctx, c.class, c.loaded.Module)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return resource.UserErrorf(ReasonProviderNotConfigured, "%s", strings.Join(problems, "; "))
	}
	c.failed = ""
	return nil
}
