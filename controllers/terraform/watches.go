package terraform

import (
	"context"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// watches are the objects whose changes reach t's resources: their Provider (its spec,
// not the status its usage controller writes), Secrets, and the ConfigMaps that hold
// variables.
func (r *connector) watches(provider client.Object) []managed.Watch {
	w := []managed.Watch{
		{Object: provider, Map: r.forProvider, Predicates: []predicate.Predicate{predicate.GenerationChangedPredicate{}}},
		{Object: &corev1.Secret{}, Map: r.forSecret, Metadata: true},
	}
	if r.policies != nil {
		w = append(w, r.policyWatches()...)
	}
	if r.kind.Terraform.WatchedObjects != nil {
		w = append(w, managed.Watch{Object: &corev1.ConfigMap{}, Map: r.forVariableObject("ConfigMap"), Metadata: true})
	}
	return w
}

// userAnnotationChanged passes annotation changes other than the create-pending record
// this reconciler writes around a create: a reconcile set off by that write would read a
// cached copy without the status the create is about to record, and create again.
var userAnnotationChanged = predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
	ours := func(k string, _ string) bool { return k == common.CreatePendingAnnotation }
	before, after := maps.Clone(e.ObjectOld.GetAnnotations()), maps.Clone(e.ObjectNew.GetAnnotations())
	maps.DeleteFunc(before, ours)
	maps.DeleteFunc(after, ours)
	return !maps.Equal(before, after)
}}

// watchIndex indexes a kind's resources in the cache by what the watches below look
// for, so that an event finds the resources it concerns without reading every resource
// of its namespace: a namespace of 10,000 claims writes tens of thousands of Secrets.
const watchIndex = "terraplane.io/watched"

// Keys of watchIndex besides the objects a resource reads ("Secret/creds").
const (
	// keyFailing marks a resource whose Synced is False for a reason a fixed Secret or
	// Provider may clear.
	keyFailing = "failing"
	// keyFailingOnSecret marks a failing resource whose reason names a Secret.
	keyFailingOnSecret = "failing:Secret"
)

// watchKeys is the watchIndex of kind's resources: each object a resource reads, as
// "Kind/name" (its Provider among them), and the keys of a failure a watch retries.
func watchKeys(kind *registry.ManagedKind) client.IndexerFunc {
	return func(obj client.Object) []string {
		mg, ok := obj.(resource.Managed)
		if !ok {
			return nil
		}
		var keys []string
		if ref := mg.GetManagedSpec().ProviderRef; ref != nil {
			keys = append(keys, kind.ProviderGVK.Kind+"/"+ref.Name)
		}
		if kind.Terraform.WatchedObjects != nil {
			keys = append(keys, kind.Terraform.WatchedObjects(mg)...)
		}
		if synced := meta.FindStatusCondition(mg.GetManagedStatus().Conditions, common.TypeSynced); synced != nil &&
			synced.Status == metav1.ConditionFalse && !common.IsHoldReason(synced.Reason) && synced.Reason != common.ReasonCreateInterrupted {
			keys = append(keys, keyFailing)
			if strings.Contains(synced.Reason, "Secret") {
				keys = append(keys, keyFailingOnSecret)
			}
		}
		slices.Sort(keys)
		return slices.Compact(keys)
	}
}

// forVariableObject maps a Secret or ConfigMap to the resources of this kind whose
// variables it holds.
func (r *connector) forVariableObject(kind string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		return r.resourcesKeyed(ctx, obj.GetNamespace(), kind+"/"+obj.GetName())
	}
}

// forSecret maps a Secret to the resources of this kind whose variables it holds, and to
// those in its namespace that are failing (on missing or wrong credentials, say), so that
// creating or fixing a Provider's Secret takes effect at once. Secrets Terraplane writes
// itself (connection details, saved plans) retry only failures that name a Secret.
func (r *connector) forSecret(ctx context.Context, obj client.Object) []reconcile.Request {
	ours := obj.GetLabels()[resource.ManagedLabel] != "" || obj.GetLabels()[resource.PlanLabel] != ""
	failing := keyFailing
	if ours {
		failing = keyFailingOnSecret
	}
	return r.resourcesKeyed(ctx, obj.GetNamespace(), "Secret/"+obj.GetName(), failing)
}

// forProvider maps a Provider to the resources of this kind that use it: through their
// providerRef, or as one of the providers they name besides (a Module's providerConfigRefs).
func (r *connector) forProvider(ctx context.Context, p client.Object) []reconcile.Request {
	return r.resourcesKeyed(ctx, p.GetNamespace(), r.kind.ProviderGVK.Kind+"/"+p.GetName())
}

// resourcesKeyed names the resources of this kind in namespace ns that carry any of keys
// in watchIndex, each once.
func (r *connector) resourcesKeyed(ctx context.Context, ns string, keys ...string) []reconcile.Request {
	var reqs []reconcile.Request
	seen := map[reconcile.Request]bool{}
	for _, key := range keys {
		list := r.kind.NewList()
		if err := r.client.List(ctx, list, client.InNamespace(ns), client.MatchingFields{watchIndex: key}, client.UnsafeDisableDeepCopy); err != nil {
			continue
		}
		_ = forEach(list, func(mg resource.Managed) {
			if req := (reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mg)}); !seen[req] {
				seen[req] = true
				reqs = append(reqs, req)
			}
		})
	}
	return reqs
}

// resourcesIn names the resources of this kind in namespace ns ("" for all) that match,
// which only reads them: they are the cache's own objects, not copies.
func (r *connector) resourcesIn(ctx context.Context, ns string, match func(resource.Managed) bool) []reconcile.Request {
	list := r.kind.NewList()
	if err := r.client.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	_ = forEach(list, func(mg resource.Managed) {
		if match(mg) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(mg)})
		}
	})
	return reqs
}
