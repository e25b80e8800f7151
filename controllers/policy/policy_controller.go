package policy

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	"terraplane.io/terraplane/internal/planpolicy"
	"terraplane.io/terraplane/internal/resource"
)

// ReasonInvalidExpression: a rule's expression or messageExpression does not compile.
const ReasonInvalidExpression = "InvalidExpression"

// ReasonCompiled: every rule compiles.
const ReasonCompiled = "Compiled"

// kind is one policy kind: how to make one, and read its spec and status.
type kind struct {
	name   string
	new    func() client.Object
	spec   func(client.Object) policyv1.PlanPolicySpec
	status func(client.Object) *policyv1.PlanPolicyStatus
}

// policyKinds are PlanPolicy and NamespacedPlanPolicy.
var policyKinds = []kind{
	{"planpolicy", func() client.Object { return &policyv1.PlanPolicy{} },
		func(o client.Object) policyv1.PlanPolicySpec { return o.(*policyv1.PlanPolicy).Spec },
		func(o client.Object) *policyv1.PlanPolicyStatus { return &o.(*policyv1.PlanPolicy).Status }},
	{"namespacedplanpolicy", func() client.Object { return &policyv1.NamespacedPlanPolicy{} },
		func(o client.Object) policyv1.PlanPolicySpec { return o.(*policyv1.NamespacedPlanPolicy).Spec },
		func(o client.Object) *policyv1.PlanPolicyStatus { return &o.(*policyv1.NamespacedPlanPolicy).Status }},
}

// Reconciler compiles one policy kind's rules and reports the outcome.
type Reconciler struct {
	client   client.Client
	cache    *planpolicy.Cache
	recorder resource.Recorder
	kind     kind
}

// Setup registers the reconcilers of both policy kinds; cache is shared with the
// managed reconcilers, so that each policy generation is compiled once.
func Setup(mgr ctrl.Manager, cache *planpolicy.Cache) error {
	for _, k := range policyKinds {
		r := &Reconciler{client: mgr.GetClient(), cache: cache, recorder: resource.NewRecorder(mgr, "terraplane-policy"), kind: k}
		err := ctrl.NewControllerManagedBy(mgr).Named(k.name).
			For(k.new(), builder.WithPredicates(predicate.GenerationChangedPredicate{})).Complete(r)
		if err != nil {
			return fmt.Errorf("set up %s controller: %w", k.name, err)
		}
	}
	return nil
}

// Reconcile compiles the policy's rules and sets Synced: True, or False with reason
// InvalidExpression and the CEL errors (announced by one Warning event).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.kind.new()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil // the managed reconcilers no longer list it
		}
		return ctrl.Result{}, err
	}
	orig := obj.DeepCopyObject().(client.Object)
	_, err := r.cache.Compile(obj.GetName(), obj.GetNamespace(), obj.GetUID(), obj.GetGeneration(), r.kind.spec(obj))
	return r.finish(ctx, obj, orig, err)
}

// finish records whether the rules compiled: Synced=True (Compiled), or False with
// reason InvalidExpression, the CEL errors and one Warning event; any other failure is
// retried with backoff.
func (r *Reconciler) finish(ctx context.Context, obj, orig client.Object, err error) (ctrl.Result, error) {
	var invalid *planpolicy.CompileError
	if errors.As(err, &invalid) {
		err = resource.UserErrorf(ReasonInvalidExpression, "the policy denies every plan it matches until this is fixed: %s", invalid.Error())
	}
	st := r.kind.status(obj)
	return resource.Finisher{Client: r.client, Recorder: r.recorder}.End(ctx, resource.Ending{Object: obj, Orig: orig,
		Conditions: &st.Conditions, Observed: &st.ObservedGeneration, Outcome: resource.Classify(err, resource.Retries{}),
		Status: func(o *resource.Outcome) []resource.Note { compiled(st, obj.GetGeneration(), *o); return nil }})
}

// compiled names a success for what it is: every rule compiles.
func compiled(st *policyv1.PlanPolicyStatus, gen int64, o resource.Outcome) {
	if o.Succeeded() {
		resource.SetCondition(&st.Conditions, gen, common.TypeSynced, metav1.ConditionTrue, ReasonCompiled, "every rule compiles")
	}
}
