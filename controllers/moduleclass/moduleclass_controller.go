package moduleclass

import (
	"context"
	"slices"

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
		Watches(&terraformv1.ProviderConfig{}, handler.EnqueueRequestsFromMapFunc(r.using(providerConfigsOf))).
		Complete(r)
}

// Reconcile loads the class's module, describes it in status and validates the class.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	class := &terraformv1.ModuleClass{}
	if err := r.client.Get(ctx, req.NamespacedName, class); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	c := &check{class: class, orig: class.DeepCopy()}
	for _, phase := range []func(context.Context, *check) error{r.load, r.checkModule, r.validate, r.checkProviders, r.checkProviderConfigs} {
		if c.err = phase(ctx, c); c.err != nil {
			break
		}
	}
	return r.finish(ctx, c)
}

// configMapOf names the ConfigMap a class's source reads its module from.
func configMapOf(t terraformv1.ModuleClassSpecTemplate) []string {
	if src := t.Source; src.ConfigMap != nil {
		return []string{src.ConfigMap.Name}
	}
	return nil
}

// secretOf names the Secret a class's source reads its credentials from.
func secretOf(t terraformv1.ModuleClassSpecTemplate) []string {
	switch src := t.Source; {
	case src.Git != nil && src.Git.SecretRef != nil:
		return []string{src.Git.SecretRef.Name}
	case src.OCI != nil && src.OCI.SecretRef != nil:
		return []string{src.OCI.SecretRef.Name}
	}
	return nil
}

// providerConfigsOf names the ProviderConfigs a class's resources use.
func providerConfigsOf(t terraformv1.ModuleClassSpecTemplate) []string {
	var names []string
	if t.ProviderRef != nil {
		names = append(names, t.ProviderRef.Name)
	}
	for _, ref := range t.ProviderConfigRefs {
		names = append(names, ref.Name)
	}
	return names
}

// using maps an object to the classes in its namespace whose template names it.
func (r *Reconciler) using(named func(terraformv1.ModuleClassSpecTemplate) []string) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		list := &terraformv1.ModuleClassList{}
		if err := r.client.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for _, c := range list.Items {
			if slices.Contains(named(c.SpecTemplate), obj.GetName()) {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
			}
		}
		return reqs
	}
}
