package stack

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// claim takes ownership of obj for the install, refusing objects someone else owns. A CRD
// that an uninstall kept may be adopted.
func claim(obj client.Object, owner string, exists bool) error {
	a := obj.GetAnnotations()
	if exists && a[stacksv1.AnnotationOwner] != owner && !(a[stacksv1.AnnotationOwner] == "" && a[stacksv1.AnnotationKeptFrom] != "") {
		by := a[stacksv1.AnnotationOwner]
		if by == "" {
			by = "no stack"
		}
		return resource.UserErrorf(stacksv1.ReasonConflict, "%s %s already exists and is owned by %s, not by this stack; remove it or the other stack first",
			obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), by)
	}
	if a == nil {
		a = map[string]string{}
	}
	a[stacksv1.AnnotationOwner] = owner
	delete(a, stacksv1.AnnotationKeptFrom)
	obj.SetAnnotations(a)
	return nil
}

// applyCRDs checks every CRD for a collision first, then creates or updates them all.
func (r *InstallReconciler) applyCRDs(ctx context.Context, in *install) error {
	current := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, want := range in.pkg.CRDs {
		have := &apiextensionsv1.CustomResourceDefinition{}
		err := r.client.Get(ctx, client.ObjectKey{Name: want.Name}, have)
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("get CRD %s: %w", want.Name, err)
		}
		exists := err == nil
		have.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := claim(have, in.obj.OwnerKey(), exists); err != nil {
			return err
		}
		if exists {
			current[want.Name] = have
		}
	}
	for _, want := range in.pkg.CRDs {
		crd := want.DeepCopy()
		crd.Annotations[stacksv1.AnnotationOwner] = in.obj.OwnerKey()
		crd.Labels = merge(crd.Labels, map[string]string{stacksv1.LabelStack: in.obj.GetName()})
		if have, ok := current[crd.Name]; ok {
			crd.ResourceVersion = have.ResourceVersion
			if err := r.client.Update(ctx, crd); err != nil {
				return fmt.Errorf("update CRD %s: %w", crd.Name, err)
			}
			continue
		}
		if err := r.client.Create(ctx, crd); err != nil {
			return fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

// applyStack writes the Stack record from app.yaml and install.yaml.
func (r *InstallReconciler) applyStack(ctx context.Context, in *install) error {
	s := &stacksv1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: in.obj.StackNamespace(), Name: in.obj.GetName()}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.client, s, func() error {
		s.SetGroupVersionKind(stacksv1.GroupVersion.WithKind("Stack"))
		if err := claim(s, in.obj.OwnerKey(), s.ResourceVersion != ""); err != nil {
			return err
		}
		s.Labels = merge(s.Labels, map[string]string{stacksv1.LabelStack: s.Name})
		s.Spec = stacksv1.StackSpec{AppMetadataSpec: in.pkg.App, CRDs: stacksv1.CRDs{Owned: in.pkg.Owned(), DependsOn: in.pkg.DependsOn()}}
		if d := in.pkg.Install; d != nil {
			s.Spec.Controller.Deployment = &stacksv1.ControllerDeployment{Name: d.Name, Spec: d.Spec}
		}
		return nil
	})
	if apierrors.IsNotFound(err) {
		return resource.UserErrorf(stacksv1.ReasonMissingNamespace, "namespace %s for Stack %s does not exist; create it or set spec.targetNamespace", s.Namespace, s.Name)
	}
	if _, user := resource.AsUserError(err); err != nil && !user {
		return fmt.Errorf("apply stack: %w", err)
	}
	in.obj.GetInstallStatus().StackRef = &stacksv1.StackReference{Namespace: s.Namespace, Name: s.Name}
	return err
}

// claimDefinitionKind is the one cluster-scoped kind a Terraform-module stack may ship.
var claimDefinitionKind = schema.GroupKind{Group: "apiextensions.terraplane.io", Kind: "ClaimDefinition"}

// terraformGroup holds the kinds that run code for claims (ModuleClass) or configure
// providers (ProviderConfig).
const terraformGroup = "terraform.terraplane.io"

// allowTerraform refuses, before anything is applied, a stack that ships terraform.terraplane.io
// kinds unless it is a ClusterStackInstall whose admin allowed them.
func allowTerraform(in *install) error {
	if in.obj.AllowsTerraform() {
		return nil
	}
	for _, o := range in.pkg.Objects {
		if o.GroupVersionKind().Group != terraformGroup {
			continue
		}
		how := "install it with a ClusterStackInstall that sets spec.allowTerraform: true"
		if in.obj.AllowsClusterScope() {
			how = "set spec.allowTerraform: true if you trust the stack's modules"
		}
		return resource.UserErrorf(common.ReasonTerraformNotAllowed, "the stack ships %s %s, which runs the stack author's code for claims; %s",
			o.GetKind(), o.GetName(), how)
	}
	return nil
}

// applyTerraform writes each module into a ConfigMap and applies the classes and claim
// definitions; a namespaced install keeps everything in its own namespace, and only an
// allowed ClusterStackInstall ships terraform.terraplane.io kinds. The classes of a kind
// the stack defines apply once the definition's CRDs are served (a retry).
func (r *InstallReconciler) applyTerraform(ctx context.Context, in *install) error {
	if err := allowTerraform(in); err != nil {
		return err
	}
	ns := in.obj.StackNamespace()
	var objs []*unstructured.Unstructured
	mods := make([]string, 0, len(in.pkg.Modules))
	for m := range in.pkg.Modules {
		mods = append(mods, m)
	}
	sort.Strings(mods)
	for _, m := range mods {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: m}, Data: in.pkg.Modules[m]}
		u, err := toUnstructured(cm)
		if err != nil {
			return err
		}
		objs = append(objs, u)
	}
	for _, o := range in.pkg.Objects {
		u := o.DeepCopy()
		if o.GroupVersionKind().GroupKind() == claimDefinitionKind {
			if !in.obj.AllowsClusterScope() {
				return resource.UserErrorf(stacksv1.ReasonScopeNotAllowed, "ClaimDefinition %s defines a claim kind for every namespace; only a ClusterStackInstall installs it", u.GetName())
			}
			objs = append(objs, u) // cluster-scoped
			continue
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(ns)
		}
		if u.GetNamespace() != ns && !in.obj.AllowsClusterScope() {
			return resource.UserErrorf(stacksv1.ReasonScopeNotAllowed, "%s %s is for namespace %s; a StackInstall installs only into %s", u.GetKind(), u.GetName(), u.GetNamespace(), ns)
		}
		objs = append(objs, u)
	}
	var refs []stacksv1.ObjectReference
	for _, u := range objs {
		refs = append(refs, stacksv1.ObjectReference{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()})
	}
	st := in.obj.GetInstallStatus()
	stale := minusRefs(st.InstalledObjects, refs)
	st.InstalledObjects = append(append([]stacksv1.ObjectReference{}, refs...), stale...) // see apply
	for _, u := range objs {
		if err := r.applyObject(ctx, in, u); err != nil {
			return err
		}
	}
	kept, err := r.deleteObjects(ctx, in, stale)
	if len(kept) > 0 {
		r.recorder.Eventf(in.obj, corev1.EventTypeNormal, stacksv1.ReasonKeptModules, "kept %s: Modules still use them", strings.Join(kept, ", "))
	}
	if err != nil {
		return err
	}
	st.InstalledObjects = refs
	return nil
}

// applyObject creates or replaces one module ConfigMap or class.
func (r *InstallReconciler) applyObject(ctx context.Context, in *install, want *unstructured.Unstructured) error {
	have := &unstructured.Unstructured{}
	have.SetGroupVersionKind(want.GroupVersionKind())
	err := r.client.Get(ctx, client.ObjectKeyFromObject(want), have)
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("get %s %s: %w", want.GetKind(), want.GetName(), err)
	}
	if err := claim(have, in.obj.OwnerKey(), err == nil); err != nil {
		return err
	}
	want.SetAnnotations(merge(want.GetAnnotations(), map[string]string{stacksv1.AnnotationOwner: in.obj.OwnerKey()}))
	want.SetLabels(merge(want.GetLabels(), map[string]string{stacksv1.LabelStack: in.obj.GetName()}))
	if have.GetResourceVersion() != "" {
		want.SetResourceVersion(have.GetResourceVersion())
		if err := r.client.Update(ctx, want); err != nil {
			return fmt.Errorf("update %s %s: %w", want.GetKind(), want.GetName(), err)
		}
		return nil
	}
	err = r.client.Create(ctx, want)
	if apierrors.IsNotFound(err) {
		return resource.UserErrorf(stacksv1.ReasonMissingNamespace, "create %s %s: namespace %s does not exist", want.GetKind(), want.GetName(), want.GetNamespace())
	}
	if err != nil {
		return fmt.Errorf("create %s %s: %w", want.GetKind(), want.GetName(), err)
	}
	return nil
}

// deleteObjects deletes installed modules and classes that this install owns; gone
// already is fine. A module ConfigMap that Modules still use is kept (and returned), so
// that they can still be planned and destroyed.
func (r *InstallReconciler) deleteObjects(ctx context.Context, in *install, refs []stacksv1.ObjectReference) ([]string, error) {
	var kept []string
	for _, ref := range refs {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(ref.APIVersion)
		u.SetKind(ref.Kind)
		err := r.client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u)
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) || err == nil && u.GetAnnotations()[stacksv1.AnnotationOwner] != in.obj.OwnerKey() {
			continue // gone, or not ours
		}
		if err != nil {
			return nil, fmt.Errorf("get %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, err)
		}
		used, err := r.moduleInUse(ctx, ref)
		if err != nil {
			return nil, err
		}
		if used {
			kept = append(kept, "ConfigMap "+ref.Namespace+"/"+ref.Name)
			a := merge(u.GetAnnotations(), map[string]string{stacksv1.AnnotationKeptFrom: in.obj.OwnerKey()})
			delete(a, stacksv1.AnnotationOwner)
			u.SetAnnotations(a)
			if err := r.client.Update(ctx, u); err != nil {
				return nil, fmt.Errorf("mark ConfigMap %s/%s kept: %w", ref.Namespace, ref.Name, err)
			}
			continue
		}
		if err := client.IgnoreNotFound(r.client.Delete(ctx, u)); err != nil {
			return nil, fmt.Errorf("delete %s %s/%s: %w", ref.Kind, ref.Namespace, ref.Name, err)
		}
	}
	return kept, nil
}

// moduleInUse reports whether ref is a ConfigMap that a Module takes its files from.
func (r *InstallReconciler) moduleInUse(ctx context.Context, ref stacksv1.ObjectReference) (bool, error) {
	if ref.Kind != "ConfigMap" || ref.APIVersion != "v1" {
		return false, nil
	}
	list := &terraformv1.ModuleList{}
	if err := r.reader.List(ctx, list, client.InNamespace(ref.Namespace)); err != nil {
		return false, fmt.Errorf("list modules: %w", err)
	}
	for _, m := range list.Items {
		if cm := m.Spec.Source.ConfigMap; cm != nil && cm.Name == ref.Name {
			return true, nil
		}
	}
	return false, nil
}

// removeCRDs deletes the named CRDs that hold no custom resources and keeps the rest,
// marking them kept; it returns the kept ones.
func (r *InstallReconciler) removeCRDs(ctx context.Context, in *install, names []string) ([]string, error) {
	var kept []string
	for _, n := range names {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.client.Get(ctx, client.ObjectKey{Name: n}, crd); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("get CRD %s: %w", n, err)
		}
		if crd.Annotations[stacksv1.AnnotationOwner] != in.obj.OwnerKey() {
			continue
		}
		used, err := r.inUse(ctx, crd)
		if err != nil {
			return nil, err
		}
		if !used {
			if err := client.IgnoreNotFound(r.client.Delete(ctx, crd)); err != nil {
				return nil, fmt.Errorf("delete CRD %s: %w", n, err)
			}
			continue
		}
		kept = append(kept, n)
		delete(crd.Annotations, stacksv1.AnnotationOwner)
		crd.Annotations[stacksv1.AnnotationKeptFrom] = in.obj.OwnerKey()
		if err := r.client.Update(ctx, crd); err != nil {
			return nil, fmt.Errorf("mark CRD %s kept: %w", n, err)
		}
	}
	return kept, nil
}

// inUse reports whether any custom resource of crd exists, in any namespace.
func (r *InstallReconciler) inUse(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (bool, error) {
	version := crd.Spec.Versions[0].Name
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			version = v.Name
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.ListKind})
	if err := r.reader.List(ctx, list, client.Limit(1)); err != nil {
		return false, fmt.Errorf("list %s: %w", crd.Name, err)
	}
	return len(list.Items) > 0, nil
}

// toUnstructured converts a typed object.
func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert to unstructured: %w", err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// merge adds b's entries to a (allocating a if nil) and returns it.
func merge(a, b map[string]string) map[string]string {
	if a == nil {
		a = map[string]string{}
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

// minusRefs returns the references in a that are not in b.
func minusRefs(a, b []stacksv1.ObjectReference) []stacksv1.ObjectReference {
	keep := map[stacksv1.ObjectReference]bool{}
	for _, x := range b {
		keep[x] = true
	}
	var out []stacksv1.ObjectReference
	for _, x := range a {
		if !keep[x] {
			out = append(out, x)
		}
	}
	return out
}
