package trace

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	kubernetesv1 "terraplane.io/terraplane/apis/kubernetes/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
)

// applicationChildren: the cluster the application is placed on (a KubernetesCluster
// claim, traced as a claim, or a ProviderConfig), then each KubernetesApplicationResource
// it controls.
func (t *Tracer) applicationChildren(ctx context.Context, app *unstructured.Unstructured, w walk) []*Node {
	var out []*Node
	ns := app.GetNamespace()
	kind, cns, name := clusterOf(app, ns, "status", "clusterRef")
	if name == "" {
		if pc := str(app, "spec", "providerConfigRef", "name"); pc != "" {
			kind, cns, name = string(workloadv1.ClusterKindProviderConfig), str(app, "spec", "providerConfigRef", "namespace"), pc
			if cns == "" {
				cns = ns
			}
		}
	}
	if name != "" {
		out = append(out, t.cluster(ctx, kind, cns, name, w))
		w.cluster = kind + "/" + cns + "/" + name
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(workloadv1.GroupVersion.WithKind("KubernetesApplicationResourceList"))
	if err := t.Reader.List(ctx, list, client.InNamespace(ns)); err != nil {
		n := errorNode(workloadv1.GroupVersion.String(), "KubernetesApplicationResource", ns, "*", err)
		n.Display = "KubernetesApplicationResource/*"
		return append(out, n)
	}
	for i := range list.Items {
		r := &list.Items[i]
		if owner := metav1.GetControllerOf(r); owner != nil && owner.UID == app.GetUID() {
			r.SetGroupVersionKind(workloadv1.GroupVersion.WithKind("KubernetesApplicationResource"))
			out = append(out, t.expand(ctx, r, w))
		}
	}
	return out
}

// appResourceChildren: the cluster the resource is submitted to, unless it is its
// application's (shown above it already), and the Secrets it copies there.
func (t *Tracer) appResourceChildren(ctx context.Context, r *unstructured.Unstructured, w walk) []*Node {
	var out []*Node
	ns := r.GetNamespace()
	kind, cns, name := clusterOf(r, ns, "status", "clusterRef")
	if name == "" {
		kind, cns, name = clusterOf(r, ns, "spec", "targetRef")
	}
	if name != "" && kind+"/"+cns+"/"+name != w.cluster {
		out = append(out, t.cluster(ctx, kind, cns, name, w))
	}
	secrets, _, _ := unstructured.NestedSlice(r.Object, "spec", "secrets")
	for _, s := range secrets {
		if m, ok := s.(map[string]any); ok {
			if name, _ := m["name"].(string); name != "" {
				out = append(out, t.secret(ctx, ns, name))
			}
		}
	}
	return out
}

// clusterOf reads a ClusterReference {kind, name, namespace} at path.
func clusterOf(obj *unstructured.Unstructured, def string, path ...string) (kind, namespace, name string) {
	m, found, _ := unstructured.NestedStringMap(obj.Object, path...)
	if !found || m["name"] == "" {
		return "", "", ""
	}
	namespace = m["namespace"]
	if namespace == "" {
		namespace = def
	}
	return m["kind"], namespace, m["name"]
}

// cluster is the node of a workload's cluster: a KubernetesCluster claim or a
// kubernetes.terraplane.io ProviderConfig.
func (t *Tracer) cluster(ctx context.Context, kind, namespace, name string, w walk) *Node {
	var gvk schema.GroupVersionKind
	switch workloadv1.ClusterKind(kind) {
	case workloadv1.ClusterKindClaim:
		gvk = computev1.GroupVersion.WithKind("KubernetesCluster")
	default:
		gvk = kubernetesv1.GroupVersion.WithKind("ProviderConfig")
	}
	return t.node(ctx, gvk, namespace, name, w)
}
