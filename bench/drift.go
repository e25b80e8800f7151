package main

import (
	"context"
	"fmt"
	"time"

	common "terraplane.io/terraplane/apis/common/v1alpha1"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
)

// managedOf returns the managed resources bound to the claims, as unstructured objects.
func (h *harness) managedOf(ctx context.Context, names []string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, name := range names {
		b := &storagev1.Bucket{}
		if err := h.c.Get(ctx, types.NamespacedName{Namespace: appNS, Name: name}, b); err != nil {
			return nil, err
		}
		ref := b.Spec.ResourceRef
		if ref == nil {
			return nil, fmt.Errorf("claim %s is not bound", name)
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
		u.SetNamespace(ref.Namespace)
		u.SetName(ref.Name)
		out = append(out, u)
	}
	return out, nil
}

// drift asks every claim's managed resource for a drift check at once (annotation
// terraplane.io/requested-at), waits until all have answered, and returns the CPU the
// controller, terraform and the providers spent on it.
func (h *harness) drift(ctx context.Context, names []string) (time.Duration, error) {
	objs, err := h.managedOf(ctx, names)
	if err != nil {
		return 0, err
	}
	c0 := h.fleet.cpu()
	p0 := h.fleet.providerCPU()
	value := time.Now().UTC().Format(time.RFC3339Nano)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, common.RequestedAtAnnotation, value)
	for _, u := range objs {
		if err := h.c.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return 0, fmt.Errorf("ask %s for a drift check: %w", u.GetName(), err)
		}
	}
	for deadline := time.Now().Add(30 * time.Minute); ; time.Sleep(250 * time.Millisecond) {
		left := 0
		for _, u := range objs {
			if err := h.c.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
				return 0, err
			}
			if got, _, _ := unstructured.NestedString(u.Object, "status", "terraform", "lastHandledRequest"); got != value {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%d drift checks not done within 30 minutes", left)
		}
	}
	c1 := h.fleet.cpu()
	return c1.self + c1.children - c0.self - c0.children + h.fleet.providerCPU() - p0, nil
}
