package trace

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/runner"
)

// RunnerPoolKind names, in tables, the node that stands for a managed resource's runner
// pool; the node is the pool's Deployment or ServiceAccount, or, where neither could be
// read, a derived node of this kind.
const RunnerPoolKind = "RunnerPool"

// Runners finds the runner of a managed resource's pool (its Tracer.Runner): the pool's
// Deployment where runners are Deployments (--runner deployment), else its
// ServiceAccount, the identity the controller's runner process of the pool has
// (--runner process).
type Runners struct {
	// Reader reads with the caller's rights.
	Reader client.Reader
	// Terraform says whether a managed kind runs terraform (native kinds run none).
	Terraform func(gvk schema.GroupVersionKind) bool
}

// Node is the runner pool node of mg: what runs its terraform, and whether it is up.
// It is nil for a kind that runs no terraform, and where the pool has neither a
// Deployment nor a ServiceAccount: terraform runs in the controller (--runner
// in-process), or the pool has not run anything yet.
func (r Runners) Node(ctx context.Context, mg *unstructured.Unstructured) *Node {
	if r.Terraform != nil && !r.Terraform(mg.GroupVersionKind()) {
		return nil
	}
	pool := runner.PoolRef{Namespace: mg.GetNamespace(), Name: str(mg, "spec", "runnerPool")}
	if pool.Name == "" {
		pool.Name = runner.DefaultPool
	}
	name := runner.ServiceAccountName(pool)
	n := &Node{Kind: RunnerPoolKind, Namespace: pool.Namespace, Name: pool.Name, Display: RunnerPoolKind + "/" + pool.Name}
	dep := &unstructured.Unstructured{}
	dep.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	derr := r.Reader.Get(ctx, client.ObjectKey{Namespace: pool.Namespace, Name: name}, dep)
	if derr == nil {
		n.APIVersion, n.Kind, n.Name = "apps/v1", "Deployment", name
		deployed(n, dep)
		return n
	}
	sa := &metav1.PartialObjectMetadata{}
	sa.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"})
	serr := r.Reader.Get(ctx, client.ObjectKey{Namespace: pool.Namespace, Name: name}, sa)
	switch {
	case serr == nil:
		n.APIVersion, n.Kind, n.Name = "v1", "ServiceAccount", name
		n.Reason = "Process"
		n.Message = fmt.Sprintf("a runner process of the controller (--runner process), as ServiceAccount %s", name)
		if ts := sa.GetCreationTimestamp(); !ts.IsZero() {
			n.Created = &ts
		}
		return n
	case apierrors.IsNotFound(derr) && apierrors.IsNotFound(serr):
		return nil
	case !apierrors.IsNotFound(derr):
		serr = derr // what kept the Deployment from being read says most
	}
	e := errorNode("", RunnerPoolKind, pool.Namespace, pool.Name, fmt.Errorf("read the runner of pool %s: %w", pool.Name, serr))
	e.Display, e.Derived = n.Display, true
	return e
}

// deployed fills n from the pool's runner Deployment: Ready while a replica is ready.
func deployed(n *Node, dep *unstructured.Unstructured) {
	ready, _, _ := unstructured.NestedInt64(dep.Object, "status", "readyReplicas")
	want, found, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	n.Ready, n.Reason = "True", "Running"
	if ready < 1 {
		n.Ready, n.Reason = "False", "NotReady"
	}
	n.Message = fmt.Sprintf("Deployment %s: %d of %d replicas ready", dep.GetName(), ready, want)
	if ts := dep.GetCreationTimestamp(); !ts.IsZero() {
		n.Created = &ts
	}
}
