package provider

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// userKind is a kind whose objects can name providers of one kind.
type userKind struct {
	gvk     schema.GroupVersionKind
	newObj  func() client.Object
	newList func() client.ObjectList
	// names lists the providers obj names.
	names func(obj client.Object) []types.NamespacedName
}

// user is one object that names a provider.
type user struct{ kind, namespace, name string }

func (u user) String() string { return u.kind + " " + u.namespace + "/" + u.name }

// userKinds groups the kinds that can use each provider kind: every managed kind under
// the ProviderGVK it registers, and application resources under the Kubernetes
// ProviderConfig whose cluster they are placed on.
func userKinds(reg *registry.Registry) map[schema.GroupVersionKind][]userKind {
	out := map[schema.GroupVersionKind][]userKind{}
	for _, mk := range reg.ManagedKinds() {
		if mk.ProviderGVK.Empty() {
			continue
		}
		newObj := mk.New
		out[mk.ProviderGVK] = append(out[mk.ProviderGVK], userKind{
			gvk: mk.GVK, newObj: func() client.Object { return newObj() }, newList: mk.NewList, names: managedProviders,
		})
	}
	pc := kubernetesv1.GroupVersion.WithKind("ProviderConfig")
	if _, ok := out[pc]; ok {
		out[pc] = append(out[pc], userKind{
			gvk:     workloadv1.GroupVersion.WithKind("KubernetesApplicationResource"),
			newObj:  func() client.Object { return &workloadv1.KubernetesApplicationResource{} },
			newList: func() client.ObjectList { return &workloadv1.KubernetesApplicationResourceList{} },
			names:   targetProviderConfig,
		})
	}
	for _, kinds := range out { // a stable order for listings and messages
		sort.Slice(kinds, func(i, j int) bool { return kinds[i].gvk.Kind < kinds[j].gvk.Kind })
	}
	return out
}

// managedProviders are the providers a managed resource names: spec.providerRef and, for
// kinds that take several (Module), spec.providerConfigRefs; all in its namespace.
func managedProviders(obj client.Object) []types.NamespacedName {
	var out []types.NamespacedName
	if mg, ok := obj.(resource.Managed); ok && mg.GetManagedSpec().ProviderRef != nil {
		out = append(out, types.NamespacedName{Namespace: obj.GetNamespace(), Name: mg.GetManagedSpec().ProviderRef.Name})
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return out
	}
	refs, _, _ := unstructured.NestedSlice(u, "spec", "providerConfigRefs")
	for _, ref := range refs {
		if m, ok := ref.(map[string]any); ok {
			if name, _ := m["name"].(string); name != "" {
				out = append(out, types.NamespacedName{Namespace: obj.GetNamespace(), Name: name})
			}
		}
	}
	return out
}

// targetProviderConfig is the ProviderConfig an application resource is placed on, if any.
func targetProviderConfig(obj client.Object) []types.NamespacedName {
	res, ok := obj.(*workloadv1.KubernetesApplicationResource)
	if !ok || res.Spec.TargetRef == nil || res.Spec.TargetRef.Kind != workloadv1.ClusterKindProviderConfig {
		return nil
	}
	key := types.NamespacedName{Namespace: res.Spec.TargetRef.Namespace, Name: res.Spec.TargetRef.Name}
	if key.Namespace == "" {
		key.Namespace = res.Namespace
	}
	return []types.NamespacedName{key}
}

// usersOf lists, through reader, the objects that name p and may use it, sorted.
func (r *Reconciler) usersOf(ctx context.Context, reader client.Reader, p Provider) ([]user, error) {
	var out []user
	for _, uk := range r.users {
		list := uk.newList()
		if err := reader.List(ctx, list); err != nil {
			return nil, fmt.Errorf("list %s: %w", uk.gvk.Kind, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", uk.gvk.Kind, err)
		}
		for _, it := range items {
			obj, ok := it.(client.Object)
			if !ok {
				continue
			}
			uses, err := r.uses(ctx, reader, p, uk, obj)
			if err != nil {
				return nil, err
			}
			if uses {
				out = append(out, user{kind: uk.gvk.Kind, namespace: obj.GetNamespace(), name: obj.GetName()})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// uses reports whether obj, of kind uk, names p and may use it: an object in another
// namespace counts only when p consents (allowedNamespaces), since a refused reference
// must not hold, nor be listed on, another team's provider.
func (r *Reconciler) uses(ctx context.Context, reader client.Reader, p Provider, uk userKind, obj client.Object) (bool, error) {
	if !slices.Contains(uk.names(obj), client.ObjectKeyFromObject(p)) {
		return false, nil
	}
	if obj.GetNamespace() == p.GetNamespace() {
		return true, nil
	}
	c, ok := p.(consenter)
	if !ok {
		return false, nil
	}
	allowed, err := resource.NamespaceAllowed(ctx, reader, c.GetAllowedNamespaces(), p.GetNamespace(), obj.GetNamespace())
	if _, invalid := resource.AsUserError(err); invalid {
		return false, nil
	}
	return allowed, err
}

// consenter is a provider that may allow objects in other namespaces to use it.
type consenter interface {
	// GetAllowedNamespaces returns the provider's spec.allowedNamespaces.
	GetAllowedNamespaces() *common.AllowedNamespaces
}

// hold puts the in-use finalizer on p, so that deleting it waits for this reconciler.
func (r *Reconciler) hold(ctx context.Context, p Provider) error {
	if !controllerutil.AddFinalizer(p, common.InUseFinalizer) {
		return nil
	}
	if err := r.client.Update(ctx, p); err != nil {
		return fmt.Errorf("add finalizer: %w", err)
	}
	return nil
}

// release lets a deleted provider go when the API server (not only the cache) shows no
// user; otherwise it returns the users that hold it.
func (r *Reconciler) release(ctx context.Context, p Provider) ([]user, error) {
	users, err := r.usersOf(ctx, r.reader, p)
	if err != nil || len(users) > 0 {
		return users, err
	}
	if controllerutil.RemoveFinalizer(p, common.InUseFinalizer) {
		if err := r.client.Update(ctx, p); err != nil {
			return nil, fmt.Errorf("remove finalizer: %w", err)
		}
	}
	return nil, nil
}
