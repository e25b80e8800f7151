package stack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/stackpkg"
)

// resolve finds the package: spec.package directly, or spec.crd through the stack index.
func (r *InstallReconciler) resolve(ctx context.Context, in *install) error {
	spec := in.obj.GetInstallSpec()
	opts, err := r.remoteFor(ctx, in)
	if err != nil {
		return err
	}
	in.remote = opts
	in.registry = spec.Source
	if in.registry == "" {
		in.registry = r.opts.DefaultRegistry
	}
	pkg := spec.Package
	if in.registry == "" && pkg == "" {
		return resource.UserErrorf(stacksv1.ReasonNoRegistry, "set spec.source or start the manager with --stack-registry")
	}
	if ref, ok := pinned(in.obj); ok {
		in.ref = ref
		return nil
	}
	if pkg == "" {
		ix, err := stackpkg.LoadIndex(ctx, in.registry, in.remote...)
		if err != nil {
			return resource.UserErrorf(stacksv1.ReasonRegistryUnavailable, "read the stack index of %s: %v", in.registry, err)
		}
		e, err := ix.Lookup(spec.CRD)
		if err != nil {
			return resource.UserErrorf(stacksv1.ReasonCRDNotFound, "no package in registry %s owns %s; push one with `terraplane stack push`", in.registry, spec.CRD)
		}
		pkg = e.Package
	}
	ref, err := stackpkg.Ref(in.registry, pkg)
	if errors.Is(err, stackpkg.ErrNoRegistry) {
		return resource.UserErrorf(stacksv1.ReasonNoRegistry, "%v; set spec.source or start the manager with --stack-registry", err)
	}
	if err != nil {
		return resource.UserErrorf(stacksv1.ReasonInvalidPackage, "%v", err)
	}
	in.ref = ref
	return nil
}

// pinned returns the digest an install by CRD resolved to, as long as its spec is
// unchanged: pushing a newer package never upgrades such an install behind its back
// (name a package to upgrade, or recreate the install).
func pinned(obj installObject) (name.Reference, bool) {
	st := obj.GetInstallStatus()
	c := meta.FindStatusCondition(st.Conditions, stacksv1.TypeResolved)
	if obj.GetInstallSpec().CRD == "" || st.ResolvedPackage == "" || c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != obj.GetGeneration() {
		return nil, false
	}
	ref, err := name.ParseReference(st.ResolvedPackage)
	return ref, err == nil
}

// unpack pulls and checks the package in memory; nothing in it is ever run.
func (r *InstallReconciler) unpack(ctx context.Context, in *install) error {
	p, err := r.packages.pull(ctx, in.ref, in.remote)
	switch {
	case isNotFound(err):
		return resource.UserErrorf(stacksv1.ReasonPackageNotFound, "package %s is not in the registry: %v", in.ref, err)
	case errors.Is(err, stackpkg.ErrUnsafe):
		return resource.UserErrorf(stacksv1.ReasonUnsafePackage, "refused package %s: %v", in.ref, err)
	case errors.Is(err, stackpkg.ErrInvalid):
		return resource.UserErrorf(stacksv1.ReasonInvalidPackage, "%v", err)
	case err != nil:
		return resource.UserErrorf(stacksv1.ReasonRegistryUnavailable, "pull %s: %v", in.ref, err)
	}
	if p.App.PermissionScope == stacksv1.PermissionScopeCluster && !in.obj.AllowsClusterScope() {
		return resource.UserErrorf(stacksv1.ReasonScopeNotAllowed, "package %s asks for permissionScope Cluster; install it with a ClusterStackInstall", in.ref)
	}
	in.pkg = p
	in.obj.GetInstallStatus().ResolvedPackage = in.ref.Context().Digest(p.Digest).String()
	return nil
}

// dependencies checks the whole graph for cycles and missing packages, asks for an
// install of each missing direct dependency, and waits until their CRDs exist.
func (r *InstallReconciler) dependencies(ctx context.Context, in *install) error {
	installed, err := r.installedCRDs(ctx)
	if err != nil {
		return err
	}
	var missing []string
	for _, d := range in.pkg.DependsOn() {
		if !installed(d) && !ownsCRD(in.pkg.Owned(), d) {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	ix, err := stackpkg.LoadIndex(ctx, in.registry, in.remote...)
	if err != nil {
		return resource.UserErrorf(stacksv1.ReasonRegistryUnavailable, "read the stack index of %s: %v", in.registry, err)
	}
	if err := checkGraph(ix, in.ref.Context().RepositoryStr(), missing, installed); err != nil {
		return err
	}
	var waiting []string
	for _, d := range missing {
		e, _ := ix.Lookup(d) // checkGraph found every one
		msg, err := r.ensureDependency(ctx, in, e.Package)
		if err != nil {
			return err
		}
		waiting = append(waiting, fmt.Sprintf("%s from %s (%s)", d, e.Package, msg))
	}
	return resource.Waitf(stacksv1.ReasonWaitingForDependencies, "waiting for dependencies: %s", strings.Join(waiting, "; "))
}

// ensureDependency creates an install of the same kind for pkg unless one exists, and
// returns how that install is doing.
func (r *InstallReconciler) ensureDependency(ctx context.Context, in *install, pkg string) (string, error) {
	dep := r.newObj()
	dep.SetName(dependencyName(pkg))
	if _, namespaced := in.obj.(*stacksv1.StackInstall); namespaced {
		dep.SetNamespace(in.obj.GetNamespace())
	}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(dep), dep)
	if apierrors.IsNotFound(err) {
		if gone, err := r.goneSinceRead(ctx, in.obj); err != nil || gone {
			return "not made: " + in.obj.GetName() + " is being deleted", err // its uninstall ran, or runs next
		}
		dep.SetAnnotations(map[string]string{stacksv1.AnnotationDependencyOf: in.obj.OwnerKey()})
		spec := stacksv1.StackInstallSpec{Source: in.registry, Package: pkg, PullSecretName: in.obj.GetInstallSpec().PullSecretName}
		switch d := dep.(type) {
		case *stacksv1.StackInstall:
			d.Spec = spec
		case *stacksv1.ClusterStackInstall:
			d.Spec.StackInstallSpec, d.Spec.TargetNamespace = spec, in.obj.StackNamespace()
		}
		if err := r.client.Create(ctx, dep); err != nil {
			return "", fmt.Errorf("create dependency install %s: %w", dep.GetName(), err)
		}
		return "install " + dep.GetName() + " created", nil
	}
	if err != nil {
		return "", fmt.Errorf("get dependency install %s: %w", dep.GetName(), err)
	}
	if have := dep.GetInstallSpec().Package; have != "" && repoOf(have) != repoOf(pkg) {
		return "", resource.UserErrorf(stacksv1.ReasonConflict, "dependency %s needs an install named %s, which exists for another package (%s); rename or remove it", pkg, dep.GetName(), have)
	}
	if c := meta.FindStatusCondition(dep.GetInstallStatus().Conditions, common.TypeReady); c != nil && c.Status == metav1.ConditionFalse {
		return fmt.Sprintf("install %s: %s: %s", dep.GetName(), c.Reason, c.Message), nil
	}
	return "install " + dep.GetName() + " in progress", nil
}

// goneSinceRead reports whether obj, as the API server has it now, is gone or being
// deleted, although the cache still showed it installed: what it would create now would
// outlive its uninstall.
func (r *InstallReconciler) goneSinceRead(ctx context.Context, obj installObject) (bool, error) {
	now := r.newObj()
	err := r.reader.Get(ctx, client.ObjectKeyFromObject(obj), now)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s again: %w", obj.GetName(), err)
	}
	return !now.GetDeletionTimestamp().IsZero(), nil
}

// dependencyName turns repo:tag into an object name: the repository's last element.
func dependencyName(pkg string) string {
	repo := repoOf(pkg)
	n := strings.ToLower(repo[strings.LastIndex(repo, "/")+1:])
	n = strings.Map(func(c rune) rune {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' {
			return c
		}
		return '-'
	}, n)
	if len(validation.IsDNS1123Label(n)) > 0 {
		return "stack-" + strings.Trim(n, "-")
	}
	return n
}

// installedCRDs returns a test of whether a CRD (plural.group/version or *.group/version)
// is established and serves that version.
func (r *InstallReconciler) installedCRDs(ctx context.Context) (func(string) bool, error) {
	list := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := r.client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list CRDs: %w", err)
	}
	var have []string
	for _, crd := range list.Items {
		if !established(&crd) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				have = append(have, crd.Name+"/"+v.Name)
			}
		}
	}
	return func(dep string) bool { return ownsCRD(have, dep) }, nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// apply installs the package: CRDs, the Stack record, Terraform modules and classes,
// then removes what an earlier version installed and this one no longer has.
func (r *InstallReconciler) apply(ctx context.Context, in *install) error {
	st := in.obj.GetInstallStatus()
	var names []string
	for _, crd := range in.pkg.CRDs {
		names = append(names, crd.Name)
	}
	sort.Strings(names)
	stale := minus(st.InstalledCRDs, names)
	// Recorded before applying, so that an uninstall after a partial apply finds them all;
	// removal only ever touches CRDs this install owns.
	st.InstalledCRDs = append(append([]string{}, names...), stale...)
	if err := r.applyCRDs(ctx, in); err != nil {
		return err
	}
	if err := r.applyStack(ctx, in); err != nil {
		return err
	}
	if err := r.applyTerraform(ctx, in); err != nil {
		return err
	}
	if _, err := r.removeCRDs(ctx, in, stale); err != nil {
		return err
	}
	st.InstalledCRDs = names
	return nil
}

// stackReady waits for the Stack reconciler to have set up the controller.
func (r *InstallReconciler) stackReady(ctx context.Context, in *install) error {
	s := &stacksv1.Stack{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: in.obj.StackNamespace(), Name: in.obj.GetName()}, s)
	if apierrors.IsNotFound(err) {
		return resource.Waitf(stacksv1.ReasonWaitingForStack, "waiting for Stack %s/%s to appear", in.obj.StackNamespace(), in.obj.GetName())
	}
	if err != nil {
		return fmt.Errorf("get stack: %w", err)
	}
	c := meta.FindStatusCondition(s.Status.Conditions, common.TypeReady)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != s.Generation {
		return resource.Waitf(stacksv1.ReasonWaitingForStack, "waiting for Stack %s/%s to set up its controller", s.Namespace, s.Name)
	}
	return nil
}

// cacheBytes caps the package cache; it is emptied when a package would overflow it.
const cacheBytes = 64 << 20

// packageCache keeps pulled packages by digest, so a reconcile costs one manifest HEAD.
type packageCache struct {
	mu     sync.Mutex
	byDig  map[string]*stackpkg.Pulled
	bytes  int64
	limits stackpkg.Limits
}

func (c *packageCache) pull(ctx context.Context, ref name.Reference, opts []remote.Option) (*stackpkg.Pulled, error) {
	desc, err := remote.Head(ref, append(append([]remote.Option{}, opts...), remote.WithContext(ctx))...)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", ref, err)
	}
	c.mu.Lock()
	p := c.byDig[desc.Digest.String()]
	c.mu.Unlock()
	if p != nil {
		return p, nil
	}
	p, err = stackpkg.Pull(ctx, ref.Context().Digest(desc.Digest.String()), c.limits, opts...)
	if err != nil {
		return nil, err
	}
	size := p.Files.Size()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byDig == nil || c.bytes+size > cacheBytes {
		c.byDig, c.bytes = map[string]*stackpkg.Pulled{}, 0
	}
	c.byDig[p.Digest], c.bytes = p, c.bytes+size
	return p, nil
}

// isNotFound reports whether a registry answered 404.
func isNotFound(err error) bool {
	var terr *transport.Error
	return errors.As(err, &terr) && terr.StatusCode == http.StatusNotFound
}

// minus returns the elements of a not in b.
func minus(a, b []string) []string {
	in := map[string]bool{}
	for _, s := range b {
		in[s] = true
	}
	var out []string
	for _, s := range a {
		if !in[s] {
			out = append(out, s)
		}
	}
	return out
}
