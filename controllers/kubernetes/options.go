package kubernetes

import (
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"terraplane.io/terraplane/internal/resource"
)

// Options configure the controllers that reach target clusters (these and workload's).
type Options struct {
	// UserErrorRetry is how soon an object stopped by bad input is looked at again.
	UserErrorRetry time.Duration
	// UnreachableRetry is how soon an object whose cluster did not answer is retried.
	UnreachableRetry time.Duration
	// Resync is how often a remote object's status is read again.
	Resync time.Duration
	// RemoteTimeout bounds one reconcile's calls to a target cluster.
	RemoteTimeout time.Duration
	// MaxConcurrentReconciles per kind.
	MaxConcurrentReconciles int
}

// WithDefaults returns o with every unset field at its default.
func (o Options) WithDefaults() Options {
	if o.UserErrorRetry <= 0 {
		o.UserErrorRetry = 30 * time.Second
	}
	if o.UnreachableRetry <= 0 {
		o.UnreachableRetry = 30 * time.Second
	}
	if o.Resync <= 0 {
		o.Resync = time.Minute
	}
	if o.RemoteTimeout <= 0 {
		o.RemoteTimeout = 30 * time.Second
	}
	if o.MaxConcurrentReconciles <= 0 {
		o.MaxConcurrentReconciles = 10
	}
	return o
}

// Retries says how soon each outcome of an object in a target cluster is looked at again.
func (o Options) Retries() resource.Retries {
	return resource.Retries{Success: o.Resync, UserError: o.UserErrorRetry, Waiting: resource.WaitRetry, Unavailable: o.UnreachableRetry}
}

// Setup registers the kubernetes.terraplane.io controllers: Clusters, Objects and the
// ProviderConfig check.
func Setup(mgr ctrl.Manager, targets *Targets, opts Options) error {
	opts = opts.WithDefaults()
	if err := setupClusters(mgr, targets, opts); err != nil {
		return err
	}
	if err := setupObjects(mgr, targets, opts); err != nil {
		return err
	}
	return setupProviderConfigs(mgr, targets, opts)
}
