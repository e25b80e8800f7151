package trace

import (
	"context"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resourcepool"
)

// poolChildren: a ResourcePool's members (each traced as a claim), then the claims it
// filled that still exist, oldest first.
func (t *Tracer) poolChildren(ctx context.Context, pool *unstructured.Unstructured, w walk) []*Node {
	gv, err := schema.ParseGroupVersion(str(pool, "spec", "claimTemplate", "apiVersion"))
	kind := str(pool, "spec", "claimTemplate", "kind")
	if err != nil || kind == "" {
		return nil
	}
	ns := pool.GetNamespace()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gv.WithKind(kind + "List"))
	if err := t.Reader.List(ctx, list, client.InNamespace(ns)); err != nil {
		n := errorNode(gv.String(), kind, ns, "*", err)
		n.Display = kind + "/*"
		return []*Node{n}
	}
	var members, filled []*unstructured.Unstructured
	for i := range list.Items {
		c := &list.Items[i]
		if c.GetLabels()[common.PoolLabel] == pool.GetName() {
			members = append(members, c)
		} else if f, ok := resourcepool.ParseFill(c.GetAnnotations()); ok && f.Pool == pool.GetName() {
			filled = append(filled, c)
		}
	}
	var out []*Node
	for _, group := range [][]*unstructured.Unstructured{members, filled} {
		sort.SliceStable(group, func(i, j int) bool {
			a, b := group[i].GetCreationTimestamp().Time, group[j].GetCreationTimestamp().Time
			if !a.Equal(b) {
				return a.Before(b)
			}
			return group[i].GetName() < group[j].GetName()
		})
		for _, c := range group {
			c.SetGroupVersionKind(gv.WithKind(kind))
			out = append(out, t.expand(ctx, c, w))
		}
	}
	return out
}
