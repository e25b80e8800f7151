package provider

import (
	"context"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// Provider is implemented by every Provider and ProviderConfig kind.
type Provider interface {
	client.Object
	// GetProviderStatus returns the status that records the provider's users.
	GetProviderStatus() *common.ProviderStatus
}

// Reconciler tracks the users of the providers of one kind.
type Reconciler struct {
	client   client.Client
	reader   client.Reader // uncached: a provider is let go only on what the API server says
	gvk      schema.GroupVersionKind
	newObj   func() (Provider, error)
	users    []userKind
	recorder resource.Recorder
	reported sync.Map // provider key → time of its last status write
}

// Setup registers a usage reconciler for every provider kind that a managed kind in reg names.
func Setup(mgr ctrl.Manager, reg *registry.Registry) error {
	for gvk, users := range userKinds(reg) {
		r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), gvk: gvk, users: users,
			recorder: resource.NewRecorder(mgr, "terraplane-provider")}
		r.newObj = func() (Provider, error) {
			obj, err := reg.Scheme().New(gvk)
			if err != nil {
				return nil, fmt.Errorf("new %s: %w", gvk.Kind, err)
			}
			p, ok := obj.(Provider)
			if !ok {
				return nil, fmt.Errorf("%s has no provider status", gvk)
			}
			return p, nil
		}
		p, err := r.newObj()
		if err != nil {
			return err
		}
		b := ctrl.NewControllerManagedBy(mgr).
			Named("usage-" + strings.ReplaceAll(gvk.Group, ".", "-") + "-" + strings.ToLower(gvk.Kind)).
			For(p)
		for _, u := range users {
			// a user's references change only with its spec; create and delete events pass
			b = b.Watches(u.newObj(), handler.EnqueueRequestsFromMapFunc(r.forUser(u)),
				builder.WithPredicates(predicate.GenerationChangedPredicate{}))
		}
		if err := b.Complete(r); err != nil {
			return fmt.Errorf("set up %s usage controller: %w", gvk.Kind, err)
		}
	}
	return nil
}

// Reconcile records who uses one provider, holds it while anything does, and lets a
// deleted one go once nothing does.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p, err := r.newObj()
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.client.Get(ctx, req.NamespacedName, p); err != nil {
		if apierrors.IsNotFound(err) {
			r.reported.Delete(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	users, err := r.usersOf(ctx, r.client, p)
	switch {
	case err != nil:
	case p.GetDeletionTimestamp().IsZero():
		err = r.hold(ctx, p)
	case len(users) == 0:
		// the API server's answer decides; when the cache was behind, report what holds it
		if users, err = r.release(ctx, p); err == nil && len(users) == 0 {
			return ctrl.Result{}, nil // let go: nothing to report on
		}
	}
	return r.finish(ctx, p, users, err)
}

// forUser maps a user to the providers of this kind it names.
func (r *Reconciler) forUser(u userKind) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		var reqs []reconcile.Request
		for _, key := range u.names(obj) {
			reqs = append(reqs, reconcile.Request{NamespacedName: key})
		}
		return reqs
	}
}
