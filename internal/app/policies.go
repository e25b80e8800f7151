package app

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	"terraplane.io/terraplane/controllers/policy"
	"terraplane.io/terraplane/internal/planpolicy"
)

// setupPolicies starts the plan policies' controller, and their admission webhook when
// opts ask for it, and returns the cache of compiled policies the managed reconcilers
// share; nil, and no controller, when the API server does not serve
// policy.terraplane.io (CRDs older than this controller).
func setupPolicies(ctx context.Context, mgr ctrl.Manager, cfg *rest.Config, opts Options) (*planpolicy.Cache, error) {
	gk := policyv1.GroupVersion.WithKind("PlanPolicy").GroupKind()
	if _, err := mgr.GetRESTMapper().RESTMapping(gk, policyv1.GroupVersion.Version); err != nil {
		if meta.IsNoMatchError(err) {
			ctrl.Log.Info("plan policies are off: the PlanPolicy CRD is not installed")
			return nil, nil
		}
		return nil, fmt.Errorf("find plan policies: %w", err)
	}
	cache := &planpolicy.Cache{}
	if err := policy.Setup(mgr, cache); err != nil {
		return nil, err
	}
	if opts.PolicyWebhook != nil {
		if err := setupWebhook(ctx, mgr, cfg, opts); err != nil {
			return nil, err
		}
	}
	return cache, nil
}
