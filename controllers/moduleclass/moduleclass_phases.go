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
	phaseValidate  = "validate"
	phaseProviders = "providers"
)

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
	c.failed = ""
	return nil
}
