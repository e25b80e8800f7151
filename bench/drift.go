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
// controller, terraform and the providers spent on it (logging each part per claim) and
// how long the sweep took.
func (h *harness) drift(ctx context.Context, names []string) (time.Duration, time.Duration, error) {
	objs, err := h.managedOf(ctx, names)
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	c0 := h.fleet.cpu()
	p0 := h.fleet.providerCPU()
	value := time.Now().UTC().Format(time.RFC3339Nano)
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, common.RequestedAtAnnotation, value)
	for _, u := range objs {
		if err := h.c.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return 0, 0, fmt.Errorf("ask %s for a drift check: %w", u.GetName(), err)
		}
	}
	// a check of 1,000 claims takes minutes; the deadline grows with the fleet
	for deadline := time.Now().Add(30*time.Minute + time.Duration(len(objs))*time.Second); ; time.Sleep(pollEvery(len(objs))) {
		left, err := h.unanswered(ctx, objs, value)
		if err != nil {
			return 0, 0, err
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%d drift checks not done in time", left)
		}
	}
	c1 := h.fleet.cpu()
	wall := time.Since(start)
	ctrl, tf, prov := c1.self-c0.self, c1.children-c0.children, h.fleet.providerCPU()-p0
	n := float64(len(objs))
	say("drift check CPU per claim: controller %.3f s, terraform %.3f s, providers %.3f s",
		ctrl.Seconds()/n, tf.Seconds()/n, prov.Seconds()/n)
	return ctrl + tf + prov, wall, nil
}

// unanswered counts the objects whose last handled request is not value, reading each
// kind and namespace with one list call rather than a call per object.
func (h *harness) unanswered(ctx context.Context, objs []*unstructured.Unstructured, value string) (int, error) {
	type scope struct {
		gvk schema.GroupVersionKind
		ns  string
	}
	want := map[scope]map[string]bool{}
	for _, u := range objs {
		s := scope{u.GroupVersionKind(), u.GetNamespace()}
		if want[s] == nil {
			want[s] = map[string]bool{}
		}
		want[s][u.GetName()] = true
	}
	left := 0
	for s, names := range want {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(s.gvk.GroupVersion().WithKind(s.gvk.Kind + "List"))
		if err := h.c.List(ctx, list, client.InNamespace(s.ns)); err != nil {
			return 0, err
		}
		answered := 0
		for _, u := range list.Items {
			if got, _, _ := unstructured.NestedString(u.Object, "status", "terraform", "lastHandledRequest"); names[u.GetName()] && got == value {
				answered++
			}
		}
		left += len(names) - answered
	}
	return left, nil
}

// pollEvery is how often a wait for n objects lists them: a list of thousands costs the
// API server what the run being measured needs, so the interval grows with n (0.5 ms
// per object, at least 250 ms: 5 s at 10,000).
func pollEvery(n int) time.Duration {
	return max(250*time.Millisecond, time.Duration(n)*500*time.Microsecond)
}
