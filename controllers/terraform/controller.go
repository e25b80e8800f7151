package terraform

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/planpolicy"
	"terraplane.io/terraplane/internal/planstore"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/shard"
	"terraplane.io/terraplane/internal/workspace"
)

// Options configure the managed reconcilers.
type Options struct {
	// Runner runs terraform: the engine.
	Runner Runner
	// KubeconfigPath is what terraform's kubernetes state backend uses (one path, or
	// several joined as in $KUBECONFIG); empty means in-cluster.
	KubeconfigPath string
	// KubeconfigContext is the context of KubeconfigPath to use; empty means its current one.
	KubeconfigContext string
	// StateFromEnvironment leaves the state backend's cluster to the environment of the
	// terraform that runs (a runner pool's identity); KubeconfigPath is then unused.
	StateFromEnvironment bool
	// DriftInterval is how often an unchanged resource is planned to detect drift.
	DriftInterval time.Duration
	// UserErrorRetry is how soon a resource stopped by a user error is looked at again.
	UserErrorRetry time.Duration
	// MaxConcurrentReconciles per kind.
	MaxConcurrentReconciles int
	// Shards is this replica's share of the resources; nil means all of them. When set,
	// the managed controllers run on every replica, not only the elected leader.
	Shards *shard.Set
	// Policies keeps the compiled plan policies; nil checks no plan policies (their
	// kinds are not installed).
	Policies *planpolicy.Cache
}

// connector is the Connector of one Terraform kind: Connect renders a resource's
// workspace, the External it returns plans and applies it, and Delete destroys it.
type connector struct {
	client client.Client
	// reader reads uncached: the state Secrets stay out of the cache.
	reader   client.Reader
	kind     *registry.ManagedKind
	render   Renderer
	runner   Runner
	plans    *planstore.Store
	opts     Options
	recorder resource.Recorder
	// locks remembers the resources whose state lock is known to be free.
	locks freeLocks
	// policies are the plan policies checked before an apply.
	policies *planPolicies
}

// DefaultDriftInterval is how often an unchanged resource is planned when neither it
// nor the controller sets an interval.
const DefaultDriftInterval = 10 * time.Minute

// DriftInterval is the controller's drift interval d, or DefaultDriftInterval when d is
// not positive.
func DriftInterval(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultDriftInterval
	}
	return d
}

// Setup registers the managed reconciler of every Terraform kind in reg.
func Setup(mgr ctrl.Manager, reg *registry.Registry, opts Options) error {
	opts.DriftInterval = DriftInterval(opts.DriftInterval)
	if opts.UserErrorRetry <= 0 {
		opts.UserErrorRetry = 30 * time.Second
	}
	if err := registerMetrics(); err != nil {
		return fmt.Errorf("register managed metrics: %w", err)
	}
	plans := planstore.New(mgr.GetClient(), mgr.GetAPIReader())
	var policies *planPolicies
	if opts.Policies != nil {
		policies = &planPolicies{client: mgr.GetClient(), cache: opts.Policies}
	}
	for _, kind := range reg.TerraformKinds() {
		renderer, err := workspace.NewRenderer(mgr.GetClient(), kind, opts.KubeconfigPath, opts.KubeconfigContext)
		if err != nil {
			return err
		}
		renderer.StateFromEnvironment = opts.StateFromEnvironment
		t := &connector{client: mgr.GetClient(), reader: mgr.GetAPIReader(), kind: kind, render: renderer, runner: opts.Runner, plans: plans, opts: opts,
			recorder: resource.NewRecorder(mgr, "terraplane-managed"), policies: policies}
		provider, err := reg.Scheme().New(kind.ProviderGVK)
		if err != nil {
			return fmt.Errorf("provider kind for %s: %w", kind.GVK.Kind, err)
		}
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), kind.New(), watchIndex, watchKeys(kind)); err != nil {
			return fmt.Errorf("index %s by what it reads: %w", kind.GVK.Kind, err)
		}
		k := t.managedKind()
		k.Watches = t.watches(provider.(client.Object))
		if err := managed.Setup(mgr, k); err != nil {
			return err
		}
	}
	return nil
}

// failureBackoff is the first wait before a failed terraform run is retried: a run costs
// seconds of CPU, and what failed it rarely passes within milliseconds.
const failureBackoff = 5 * time.Second

// managedKind is how the managed reconciler serves t's kind: sharded, a failed change
// leaving a resource once created Ready, terraform's diagnostics summed up.
func (r *connector) managedKind() managed.Kind {
	return managed.Kind{Name: r.kind.GVK.Kind, New: r.kind.New, NewList: r.kind.NewList, Connector: r, Retries: r.retries,
		Class:      r.kind.Class(),
		KeepsReady: true, SlowApply: true, Summary: engine.Summary, Recorder: r.recorder, Shards: r.opts.Shards,
		MaxConcurrentReconciles: r.opts.MaxConcurrentReconciles, FailureBackoff: failureBackoff,
		Predicates: []predicate.Predicate{predicate.Or(predicate.GenerationChangedPredicate{}, userAnnotationChanged)}}
}

// retries says how soon each outcome of mg is looked at again: a success, or a held
// plan, at its drift interval.
func (r *connector) retries(mg resource.Managed) resource.Retries {
	interval := mg.GetManagedSpec().Timing.DriftIntervalOr(r.opts.DriftInterval)
	drift := interval + jitter(interval)
	return resource.Retries{Success: drift, UserError: r.opts.UserErrorRetry, Waiting: 5 * time.Second, Held: drift}
}

// driftInterval is how often mg is planned while unchanged: its spec.driftInterval, or
// the controller's.
func (r *connector) driftInterval(mg resource.Managed) time.Duration {
	return mg.GetManagedSpec().Timing.DriftIntervalOr(r.opts.DriftInterval)
}

func forEach(list client.ObjectList, fn func(resource.Managed)) error {
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	for _, it := range items {
		if mg, ok := it.(resource.Managed); ok {
			fn(mg)
		}
	}
	return nil
}
