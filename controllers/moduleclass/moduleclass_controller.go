package moduleclass

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

// Reconciler checks ModuleClasses.
type Reconciler struct {
	client    client.Client
	loader    *modsource.Loader
	providers *module.ProviderSources
	events    resource.Recorder
}

// Setup registers the ModuleClass controller. It watches the ConfigMaps that hold modules
// and the Secrets that hold source credentials, so a fix to either takes effect at once.
func Setup(mgr ctrl.Manager, loader *modsource.Loader, opts ...Option) error {
	r := &Reconciler{client: mgr.GetClient(), loader: loader, events: resource.NewRecorder(mgr, "terraplane-moduleclass")}
	for _, o := range opts {
		o(r)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&terraformv1.ModuleClass{}).
		WatchesMetadata(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.using(configMapOf))).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.using(secretOf))).
		Watches(&apiextv1.ClaimDefinition{}, handler.EnqueueRequestsFromMapFunc(r.forDefinition)).
		Complete(r)
}

// Reconcile loads the class's module, describes it in status and validates the class.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	class := &terraformv1.ModuleClass{}
	if err := r.client.Get(ctx, req.NamespacedName, class); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	c := &check{class: class, orig: class.DeepCopy()}
	for _, phase := range []func(context.Context, *check) error{r.load, r.validate, r.checkProviders} {
		if c.err = phase(ctx, c); c.err != nil {
			break
		}
	}
	return r.finish(ctx, c)
}

// configMapOf names the ConfigMap a source reads its module from.
func configMapOf(src terraformv1.ModuleSource) string {
	if src.ConfigMap != nil {
		return src.ConfigMap.Name
	}
	return ""
}

// secretOf names the Secret a source reads its credentials from.
func secretOf(src terraformv1.ModuleSource) string {
	switch {
	case src.Git != nil && src.Git.SecretRef != nil:
		return src.Git.SecretRef.Name
	case src.OCI != nil && src.OCI.SecretRef != nil:
		return src.OCI.SecretRef.Name
	}
	return ""
}

// using maps an object to the classes in its namespace whose source names it.
func (r *Reconciler) using(named func(terraformv1.ModuleSource) string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		list := &terraformv1.ModuleClassList{}
		if err := r.client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for _, c := range list.Items {
			if named(c.SpecTemplate.Source) == obj.GetName() {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
			}
		}
		return reqs
	}
}
