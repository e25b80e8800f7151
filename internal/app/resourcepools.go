package app

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"

	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	"terraplane.io/terraplane/controllers/resourcepool"
	"terraplane.io/terraplane/internal/registry"
	poolrules "terraplane.io/terraplane/internal/resourcepool"
)

// setupResourcePools starts the ResourcePool controller and registers the pool metrics;
// nothing, with a log line, when the API server does not serve scaling.terraplane.io (CRDs
// older than this controller).
func setupResourcePools(mgr ctrl.Manager, reg *registry.Registry, opts Options) error {
	if err := poolrules.RegisterMetrics(); err != nil {
		return fmt.Errorf("register metrics: %w", err)
	}
	gk := scalingv1.ResourcePoolGroupVersionKind.GroupKind()
	if _, err := mgr.GetRESTMapper().RESTMapping(gk, scalingv1.GroupVersion.Version); err != nil {
		if meta.IsNoMatchError(err) {
			ctrl.Log.Info("resource pools are off: the ResourcePool CRD is not installed")
			return nil
		}
		return fmt.Errorf("find resource pools: %w", err)
	}
	return resourcepool.Setup(mgr, reg, resourcepool.Options{UserErrorRetry: opts.UserErrorRetry})
}
