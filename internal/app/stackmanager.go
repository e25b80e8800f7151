package app

import (
	"context"
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"terraplane.io/terraplane/controllers/claimdefinition"
	"terraplane.io/terraplane/controllers/stack"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/registry"
)

// NewStackManager builds a manager that runs only the stack manager: stack installs,
// Stacks, and the CRDs and ClusterRoles of ClaimDefinitions. It is the one part of
// Terraplane that needs CRD, RBAC and Deployment rights, so in a cluster it runs apart
// from the controller (which runs with DisableStackManager), as its own ServiceAccount.
// Of opts it uses the stack, module source, leader election and endpoint settings.
func NewStackManager(_ context.Context, cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	opts = withDefaults(opts, func() Limits { return Limits{} })
	opts.StackManagerOnly = true
	cfg = restConfig(cfg)
	if err := modsource.ValidateAllowList(opts.ModuleSourceAllow); err != nil {
		return nil, err
	}
	loader := &modsource.Loader{CacheDir: filepath.Join(opts.WorkDir, ".modules"), AllowedSources: opts.ModuleSourceAllow,
		AllowInsecure: opts.AllowInsecureModuleSources, MaxFetchBytes: opts.ModuleSourceMaxFetch, RefreshInterval: opts.ModuleSourceRefresh}
	reg := kinds.NewRegistry(loader)
	mgr, err := ctrl.NewManager(cfg, managerOptions(opts, reg.Scheme()))
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	if err := claimdefinition.SetupDefiner(mgr, loader, reg, claimdefinition.Options{UserErrorRetry: opts.UserErrorRetry}); err != nil {
		return nil, fmt.Errorf("set up ClaimDefinition controller: %w", err)
	}
	if err := setupStacks(mgr, opts); err != nil {
		return nil, err
	}
	if err := addProbes(mgr, nil); err != nil {
		return nil, err
	}
	return mgr, nil
}

// setupStacks registers the stack install and Stack controllers.
func setupStacks(mgr ctrl.Manager, opts Options) error {
	if err := stack.Setup(mgr, stack.Options{DefaultRegistry: opts.StackRegistry, UserErrorRetry: opts.UserErrorRetry,
		TagRefresh: opts.StackTagRefresh}); err != nil {
		return fmt.Errorf("set up stack manager: %w", err)
	}
	return nil
}

// claimDefinitions sets up the controller's side of ClaimDefinitions: with the stack
// manager in the same process, one reconciler defines and serves each kind; without it,
// the controller serves the kinds a separate stack manager defined.
func claimDefinitions(mgr ctrl.Manager, loader *modsource.Loader, reg *registry.Registry, server claimdefinition.KindServer, opts Options) error {
	var err error
	if opts.DisableStackManager {
		err = claimdefinition.SetupServer(mgr, reg, server)
	} else {
		err = claimdefinition.Setup(mgr, loader, reg, server, claimdefinition.Options{UserErrorRetry: opts.UserErrorRetry})
	}
	if err != nil {
		return fmt.Errorf("set up ClaimDefinition controller: %w", err)
	}
	return nil
}

// leaderElectionID is the Lease the controller's replicas, or the stack manager's, elect
// their leader with.
func leaderElectionID(opts Options) string {
	if opts.StackManagerOnly {
		return "terraplane-stack-manager"
	}
	return "terraplane-controller"
}
