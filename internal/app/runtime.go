package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"terraplane.io/terraplane/internal/engine"
)

// The manager's permissions for the metrics endpoint's authentication and authorization.
//
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// cgroupRoot is where the container's cgroup file system is mounted.
const cgroupRoot = "/sys/fs/cgroup"

// metricsOptions serves metrics over HTTPS behind Kubernetes authentication (TokenReview)
// and authorization (SubjectAccessReview: get on the non-resource URL /metrics) when
// secure is set, and over plain HTTP otherwise (the dev plane, benchmarks).
func metricsOptions(addr string, secure bool) metricsserver.Options {
	o := metricsserver.Options{BindAddress: addr}
	if secure {
		o.SecureServing = true
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return o
}

// defaultConcurrency fills in the cap on terraform processes from the container's limits.
func defaultConcurrency(opts *Options, limits func() Limits) {
	if opts.Engine.MaxConcurrent > 0 {
		return
	}
	n, why := DefaultMaxConcurrentTerraform(limits())
	opts.Engine.MaxConcurrent = n
	ctrl.Log.WithName("setup").Info("terraform processes capped", "maxConcurrentTerraform", n, "from", why)
}

// cacheSyncWait bounds how long one readiness probe waits for the caches.
const cacheSyncWait = time.Second

// addProbes registers /healthz and a /readyz that fails until the informer caches have
// synced, and, with an engine, whenever the terraform binary it runs is gone or not
// executable.
func addProbes(mgr ctrl.Manager, eng *engine.Engine) error {
	if err := mgr.AddHealthzCheck("ping", func(*http.Request) error { return nil }); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if eng != nil {
		if err := mgr.AddReadyzCheck("terraform", func(*http.Request) error { return executable(eng.TerraformPath()) }); err != nil {
			return fmt.Errorf("add terraform ready check: %w", err)
		}
	}
	caches := func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), cacheSyncWait)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("informer caches not synced yet")
		}
		return nil
	}
	if err := mgr.AddReadyzCheck("caches", caches); err != nil {
		return fmt.Errorf("add cache ready check: %w", err)
	}
	return nil
}

// executable reports whether path is a regular file someone may execute.
func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("terraform binary: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("terraform binary %s is not an executable file", path)
	}
	return nil
}
