package trace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxDepth stops a walk that references lead in circles.
const maxDepth = 12

// Tracer walks the objects an object depends on.
type Tracer struct {
	// Reader reads with the caller's rights.
	Reader client.Reader
	// Kinds says what each kind is.
	Kinds Kinds
	// Runner, when set, is the node of the runner that runs a managed resource's
	// terraform, added under the resource (Runners.Node); nil adds none.
	Runner func(ctx context.Context, mg *unstructured.Unstructured) *Node
}

// Trace reads the object and walks what it depends on. Only an object that cannot be
// read at the root is an error; below it, a node says what it could not read.
func (t *Tracer) Trace(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*Node, error) {
	obj, err := t.get(ctx, gvk, namespace, name)
	if err != nil {
		return nil, fmt.Errorf("get %s %s/%s: %w", gvk.Kind, namespace, name, err)
	}
	return t.expand(ctx, obj, walk{}), nil
}

// walk is where a walk stands: the objects above (to stop cycles) and the cluster an
// application's resources are shown under already.
type walk struct {
	path    []string
	cluster string
}

func (w walk) enter(n *Node) (walk, bool) {
	key := n.APIVersion + "/" + n.Kind + "/" + n.Namespace + "/" + n.Name
	for _, p := range w.path {
		if p == key {
			return w, false
		}
	}
	if len(w.path) >= maxDepth {
		return w, false
	}
	w.path = append(append([]string(nil), w.path...), key)
	return w, true
}

// get reads one object as unstructured.
func (t *Tracer) get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := t.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		return nil, err
	}
	obj.SetGroupVersionKind(gvk)
	return obj, nil
}

// node reads an object and walks below it, or says why it could not.
func (t *Tracer) node(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, w walk) *Node {
	obj, err := t.get(ctx, gvk, namespace, name)
	if err != nil {
		n := errorNode(gvk.GroupVersion().String(), gvk.Kind, namespace, name, err)
		n.Display = t.display(gvk, name)
		return n
	}
	return t.expand(ctx, obj, w)
}

// expand is obj's node with what it depends on, by the role of its kind.
func (t *Tracer) expand(ctx context.Context, obj *unstructured.Unstructured, w walk) *Node {
	n := objectNode(obj)
	gvk := obj.GroupVersionKind()
	n.Display = t.display(gvk, n.Name)
	w, ok := w.enter(n)
	if !ok {
		return n
	}
	switch t.Kinds.Role(gvk) {
	case RoleClaim:
		n.Children = t.claimChildren(ctx, obj, w)
	case RoleClass:
		n.Children = t.classChildren(ctx, obj, w)
	case RoleManaged:
		n.Children = t.managedChildren(ctx, obj, w)
	case RoleProvider:
		n.Children = t.providerChildren(ctx, obj)
	case RoleApplication:
		n.Children = t.applicationChildren(ctx, obj, w)
	case RoleApplicationResource:
		n.Children = t.appResourceChildren(ctx, obj, w)
	case RolePool:
		n.Children = t.poolChildren(ctx, obj, w)
	}
	return n
}

func (t *Tracer) display(gvk schema.GroupVersionKind, name string) string {
	if gvk.Group != "" && t.Kinds.Qualify(gvk) {
		return gvk.Kind + "." + gvk.Group + "/" + name
	}
	return gvk.Kind + "/" + name
}

// secret is a Secret's node, read as metadata only: its values never reach the CLI.
func (t *Tracer) secret(ctx context.Context, namespace, name string) *Node {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	n := &Node{APIVersion: "v1", Kind: "Secret", Namespace: namespace, Name: name, Display: "Secret/" + name}
	if err := t.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, m); err != nil {
		e := errorNode("v1", "Secret", namespace, name, err)
		e.Display = n.Display
		return e
	}
	if ts := m.GetCreationTimestamp(); !ts.IsZero() {
		n.Created = &ts
	}
	return n
}

// ref is the object an {apiVersion, kind, name, namespace} reference at path names,
// its namespace defaulting to def; ok is false when the reference is unset or incomplete.
func ref(obj *unstructured.Unstructured, def string, path ...string) (gvk schema.GroupVersionKind, namespace, name string, ok bool) {
	m, found, _ := unstructured.NestedMap(obj.Object, path...)
	if !found {
		return gvk, "", "", false
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	name, _ = m["name"].(string)
	namespace, _ = m["namespace"].(string)
	if namespace == "" {
		namespace = def
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || kind == "" || name == "" {
		return gvk, "", "", false
	}
	return gv.WithKind(kind), namespace, name, true
}

// str is the string at path, or "".
func str(obj *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(obj.Object, path...)
	return s
}
