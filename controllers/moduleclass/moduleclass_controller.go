package moduleclass

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

// Reasons of the Ready condition.
const (
	ReasonValid   = "ModuleValid"
	ReasonInvalid = "InvalidMapping"
)

// Reconciler checks ModuleClasses.
type Reconciler struct {
	client    client.Client
	loader    *modsource.Loader
	providers *module.ProviderSources
	events    resource.Recorder
}

// Setup registers the ModuleClass controller.
func Setup(mgr ctrl.Manager, loader *modsource.Loader, opts ...Option) error {
	r := &Reconciler{client: mgr.GetClient(), loader: loader, events: resource.NewRecorder(mgr, "terraplane-moduleclass")}
	for _, o := range opts {
		o(r)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&terraformv1.ModuleClass{}).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.forConfigMap)).
		Complete(r)
}

// Reconcile loads the class's module, describes it in status and validates the class.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	class := &terraformv1.ModuleClass{}
	if err := r.client.Get(ctx, req.NamespacedName, class); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	orig := class.DeepCopy()
	result, err := r.check(ctx, class)
	if perr := r.client.Status().Patch(ctx, class, client.MergeFrom(orig)); client.IgnoreNotFound(perr) != nil {
		return ctrl.Result{}, fmt.Errorf("update status: %w", perr)
	}
	return result, err
}

// check fills status from the module; a problem the admin must fix is a condition, not an error.
func (r *Reconciler) check(ctx context.Context, class *terraformv1.ModuleClass) (ctrl.Result, error) {
	st := &class.Status
	m, err := r.loader.Load(ctx, r.client, class.Namespace, class.SpecTemplate.Source)
	if u, user := resource.AsUserError(err); user {
		st.Variables, st.Outputs = nil, nil
		resource.SetCondition(&st.Conditions, class.Generation, common.TypeReady, metav1.ConditionFalse, u.Reason, u.Message)
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	st.Variables, st.Outputs = modsource.Describe(m)
	if err := modsource.Validate(m, class.SpecTemplate); err != nil {
		resource.SetCondition(&st.Conditions, class.Generation, common.TypeReady, metav1.ConditionFalse, ReasonInvalid, err.Error())
		return ctrl.Result{}, nil
	}
	if msg := r.providerProblems(ctx, m); msg != "" {
		// No watch sees a mirror fill up: look again in a minute.
		if resource.SetCondition(&st.Conditions, class.Generation, common.TypeReady, metav1.ConditionFalse, ReasonProviderUnavailable, msg) {
			r.events.Event(class, corev1.EventTypeWarning, ReasonProviderUnavailable, msg)
		}
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	}
	resource.SetCondition(&st.Conditions, class.Generation, common.TypeReady, metav1.ConditionTrue, ReasonValid, "")
	return ctrl.Result{}, nil
}

// forConfigMap re-checks the classes whose module a ConfigMap holds.
func (r *Reconciler) forConfigMap(ctx context.Context, cm client.Object) []reconcile.Request {
	list := &terraformv1.ModuleClassList{}
	if err := r.client.List(ctx, list, client.InNamespace(cm.GetNamespace())); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, c := range list.Items {
		if src := c.SpecTemplate.Source.ConfigMap; src != nil && src.Name == cm.GetName() {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
		}
	}
	return reqs
}
