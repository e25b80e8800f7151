package stack

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// StackReconciler gives a Stack its ServiceAccount, RBAC and controller Deployment.
type StackReconciler struct {
	client   client.Client
	opts     Options
	recorder resource.Recorder
}

func setupStack(mgr ctrl.Manager, opts Options) error {
	r := &StackReconciler{client: mgr.GetClient(), opts: opts, recorder: resource.NewRecorder(mgr, "terraplane-stack-manager")}
	if err := ctrl.NewControllerManagedBy(mgr).For(&stacksv1.Stack{}).Owns(&appsv1.Deployment{}).Complete(r); err != nil {
		return fmt.Errorf("set up Stack controller: %w", err)
	}
	return nil
}

// stackPhase is one named step of running a Stack's controller.
type stackPhase struct {
	name string
	run  func(context.Context, *stacksv1.Stack) error
}

// Reconcile applies the Stack's ServiceAccount, RBAC and Deployment, or removes them all
// when the Stack is being deleted (there is no garbage collector to rely on).
func (r *StackReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := &stacksv1.Stack{}
	if err := r.client.Get(ctx, req.NamespacedName, s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	orig := s.DeepCopy()
	if !s.DeletionTimestamp.IsZero() {
		return r.finish(ctx, s, orig, r.teardown(ctx, s))
	}
	if controllerutil.AddFinalizer(s, Finalizer) {
		if err := r.client.Update(ctx, s); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
		orig = s.DeepCopy()
	}
	for _, p := range []stackPhase{{"service account", r.serviceAccount}, {"rbac", r.rbac}, {"deployment", r.deployment}} {
		if err := p.run(ctx, s); err != nil {
			return r.finish(ctx, s, orig, fmt.Errorf("%s: %w", p.name, err))
		}
	}
	return r.finish(ctx, s, orig, nil)
}

// teardown deletes the Deployment, RBAC and ServiceAccount, then lets the Stack go.
func (r *StackReconciler) teardown(ctx context.Context, s *stacksv1.Stack) error {
	if !controllerutil.ContainsFinalizer(s, Finalizer) {
		return nil
	}
	for _, obj := range r.owned(s) {
		if err := client.IgnoreNotFound(r.client.Delete(ctx, obj)); err != nil {
			return fmt.Errorf("delete %T %s: %w", obj, obj.GetName(), err)
		}
	}
	controllerutil.RemoveFinalizer(s, Finalizer)
	if err := client.IgnoreNotFound(r.client.Update(ctx, s)); err != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	return nil
}
