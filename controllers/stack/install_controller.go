package stack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/stackpkg"
)

// Finalizer keeps installs and Stacks until the manager has removed what they installed.
const Finalizer = "stacks.terraplane.io/finalizer"

// Options configure the stack manager.
type Options struct {
	// DefaultRegistry is used by installs without spec.source.
	DefaultRegistry string
	// UserErrorRetry is how soon an install stopped by bad input is looked at again.
	UserErrorRetry time.Duration
	// Limits cap package size and file count; zero means stackpkg.DefaultLimits.
	Limits stackpkg.Limits
	// Remote options for registry access (auth, transport); nil uses the docker keychain
	// of the manager's environment (~/.docker/config.json, credential helpers).
	Remote []remote.Option
	// TagRefresh is how often an install that names a package by tag looks the tag up
	// again, so a new digest pushed under the same tag is installed; 0 means
	// DefaultTagRefresh, a negative value never. Installs by digest, and installs by CRD
	// (which stay on the digest they resolved), are not refreshed.
	TagRefresh time.Duration
}

// DefaultTagRefresh is how often an install by tag looks its tag up again.
const DefaultTagRefresh = 10 * time.Minute

// installObject is a StackInstall or a ClusterStackInstall.
type installObject interface {
	client.Object
	stacksv1.Installer
}

// InstallReconciler installs, upgrades and uninstalls stacks for one install kind.
type InstallReconciler struct {
	client   client.Client
	reader   client.Reader
	opts     Options
	recorder resource.Recorder
	newObj   func() installObject
	packages *packageCache
}

// install is one reconcile's working state, filled in by the phases.
type install struct {
	obj      installObject
	orig     client.Object
	registry string
	remote   []remote.Option
	ref      name.Reference
	pkg      *stackpkg.Pulled
	failed   string
}

// Setup registers the StackInstall, ClusterStackInstall and Stack controllers.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.UserErrorRetry <= 0 {
		opts.UserErrorRetry = 30 * time.Second
	}
	if opts.TagRefresh == 0 {
		opts.TagRefresh = DefaultTagRefresh
	}
	if opts.Limits.MaxFiles == 0 {
		opts.Limits = stackpkg.DefaultLimits
	}
	if opts.Remote == nil {
		opts.Remote = []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	}
	cache := &packageCache{limits: opts.Limits}
	kinds := map[string]struct {
		newObj  func() installObject
		newList func() client.ObjectList
	}{
		"StackInstall": {func() installObject { return &stacksv1.StackInstall{} }, func() client.ObjectList { return &stacksv1.StackInstallList{} }},
		"ClusterStackInstall": {func() installObject { return &stacksv1.ClusterStackInstall{} },
			func() client.ObjectList { return &stacksv1.ClusterStackInstallList{} }},
	}
	for kind, k := range kinds {
		r := &InstallReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), opts: opts, newObj: k.newObj,
			recorder: resource.NewRecorder(mgr, "terraplane-stack-manager"), packages: cache}
		err := ctrl.NewControllerManagedBy(mgr).Named(kind).For(k.newObj()).
			Watches(&stacksv1.Stack{}, handler.EnqueueRequestsFromMapFunc(annotated(kind, stacksv1.AnnotationOwner))).
			Watches(k.newObj(), handler.EnqueueRequestsFromMapFunc(annotated(kind, stacksv1.AnnotationDependencyOf))).
			WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.forPullSecret(k.newList))).
			Complete(r)
		if err != nil {
			return fmt.Errorf("set up %s controller: %w", kind, err)
		}
	}
	return setupStack(mgr, opts)
}

// Reconcile runs the install phases, or the uninstall when the install is being deleted.
func (r *InstallReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObj()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	in := &install{obj: obj, orig: obj.DeepCopyObject().(client.Object)}
	if !obj.GetDeletionTimestamp().IsZero() {
		return r.finish(ctx, in, r.uninstall(ctx, in))
	}
	if controllerutil.AddFinalizer(obj, Finalizer) {
		if err := r.client.Update(ctx, obj); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
		in.orig = obj.DeepCopyObject().(client.Object)
	}
	for _, p := range r.phases() {
		if err := p.run(ctx, in); err != nil {
			in.failed = p.cond
			return r.finish(ctx, in, err)
		}
	}
	return r.finish(ctx, in, nil)
}

// annotated maps an object to the install of kind that its annotation key names
// (kind/namespace/name or kind/name): a Stack to its install, a dependency to its dependent.
func annotated(kind, key string) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		parts := strings.Split(obj.GetAnnotations()[key], "/")
		switch {
		case len(parts) == 3 && parts[0] == kind:
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: parts[1], Name: parts[2]}}}
		case len(parts) == 2 && parts[0] == kind:
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: parts[1]}}}
		}
		return nil
	}
}

// forPullSecret maps a Secret to the installs that use it as their pull secret, so that
// fixing credentials takes effect at once.
func (r *InstallReconciler) forPullSecret(newList func() client.ObjectList) handler.MapFunc {
	return func(ctx context.Context, secret client.Object) []reconcile.Request {
		list := newList()
		if err := r.client.List(ctx, list); err != nil {
			return nil
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for _, item := range items {
			in, ok := item.(installObject)
			if ok && in.GetInstallSpec().PullSecretName == secret.GetName() && in.StackNamespace() == secret.GetNamespace() {
				reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(in)})
			}
		}
		return reqs
	}
}

// phase is one named step of an install; its condition says how it went.
type phase struct {
	cond string
	run  func(context.Context, *install) error
}

// phases are the steps of an install, in order.
func (r *InstallReconciler) phases() []phase {
	return []phase{
		{stacksv1.TypeResolved, r.resolve},
		{stacksv1.TypeUnpacked, r.unpack},
		{stacksv1.TypeDependenciesReady, r.dependencies},
		{stacksv1.TypeInstalled, r.apply},
		{stacksv1.TypeControllerReady, r.stackReady},
	}
}
