package revision

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

// ProviderConfigNames are the ProviderConfigs a class template names: its providerRef
// and its providerConfigRefs, each once, in order.
func ProviderConfigNames(tmpl map[string]any) []string {
	var names []string
	add := func(ref any) {
		if m, ok := ref.(map[string]any); ok {
			if n, _ := m["name"].(string); n != "" && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	add(tmpl["providerRef"])
	refs, _ := tmpl["providerConfigRefs"].([]any)
	for _, ref := range refs {
		add(ref)
	}
	return names
}

// SnapshotProviderConfigs reads the specs of the ProviderConfigs (of kind gvk) named in
// namespace ns, sorted by name; one that does not exist is left out (the class reports
// it, and the resources' runs fail on it until it is made, which makes a new revision).
func SnapshotProviderConfigs(ctx context.Context, c client.Client, ns string, gvk schema.GroupVersionKind, names []string) ([]terraformv1.RevisionProviderConfig, error) {
	var out []terraformv1.RevisionProviderConfig
	for _, name := range slices.Sorted(slices.Values(names)) {
		obj, err := NewObject(c.Scheme(), gvk)
		if err != nil {
			return nil, err
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("get %s %s/%s: %w", gvk.Kind, ns, name, err)
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("read %s %s/%s: %w", gvk.Kind, ns, name, err)
		}
		spec, err := json.Marshal(u["spec"]) // keys sorted: the same spec, the same bytes
		if err != nil {
			return nil, fmt.Errorf("encode the spec of %s %s/%s: %w", gvk.Kind, ns, name, err)
		}
		out = append(out, terraformv1.RevisionProviderConfig{Name: name, Spec: &apiextensionsv1.JSON{Raw: spec}})
	}
	return out, nil
}

// NewObject is an empty object of kind gvk, as c's scheme makes it.
func NewObject(scheme *runtime.Scheme, gvk schema.GroupVersionKind) (client.Object, error) {
	o, err := scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("make a %s: %w", gvk.Kind, err)
	}
	obj, ok := o.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", gvk.Kind)
	}
	return obj, nil
}

// WithProviderConfigs is c, but that a Get of one of rev's ProviderConfigs (of kind gvk)
// returns it with the spec rev keeps: resources at a revision run with the ProviderConfigs
// as they were when it was made, and a change to one reaches them through a new revision.
// Everything else, the credentials' Secrets among it, is read as it is now, and a
// ProviderConfig that no longer exists is not found.
func WithProviderConfigs(c client.Client, rev *terraformv1.ClassRevision, gvk schema.GroupVersionKind) client.Client {
	if rev == nil || len(rev.Spec.ProviderConfigs) == 0 {
		return c
	}
	return &revisionProviders{Client: c, rev: rev, gvk: gvk}
}

// revisionProviders serves a revision's ProviderConfigs from its snapshot.
type revisionProviders struct {
	client.Client
	rev *terraformv1.ClassRevision
	gvk schema.GroupVersionKind
}

// Get reads key into obj, with the revision's spec for one of its ProviderConfigs.
func (r *revisionProviders) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	kept := r.kept(key, obj)
	if kept == nil {
		return r.Client.Get(ctx, key, obj, opts...)
	}
	if err := r.Client.Get(ctx, key, obj, opts...); err != nil {
		return err // one deleted is gone for every revision too
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("read %s %s: %w", r.gvk.Kind, key, err)
	}
	var spec map[string]any
	if err := json.Unmarshal(kept.Spec.Raw, &spec); err != nil {
		return fmt.Errorf("read the spec of %s %s at revision %s: %w", r.gvk.Kind, key.Name, r.rev.Name, err)
	}
	u["spec"] = spec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj); err != nil {
		return fmt.Errorf("%s %s at revision %s: %w", r.gvk.Kind, key.Name, r.rev.Name, err)
	}
	return nil
}

// kept is the revision's snapshot of the object key names, if obj is of its kind and the
// revision keeps one; nil otherwise.
func (r *revisionProviders) kept(key client.ObjectKey, obj client.Object) *terraformv1.RevisionProviderConfig {
	if key.Namespace != r.rev.Namespace {
		return nil
	}
	if gvk, err := apiutil.GVKForObject(obj, r.Scheme()); err != nil || gvk != r.gvk {
		return nil
	}
	for i, pc := range r.rev.Spec.ProviderConfigs {
		if pc.Name == key.Name && pc.Spec != nil {
			return &r.rev.Spec.ProviderConfigs[i]
		}
	}
	return nil
}
