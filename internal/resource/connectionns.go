package resource

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// ClassKind is the non-portable class kind that makes resources of a managed kind: its
// GVK and an empty object. The zero ClassKind is that of a kind bound statically only.
type ClassKind struct {
	// GVK of the class kind.
	GVK schema.GroupVersionKind
	// New returns an empty class; nil for a kind without classes.
	New func() NonPortableClass
}

// CheckConnectionSecretRef returns where mg keeps its connection Secret (ok is false
// when it keeps none), refusing a namespace mg may not write to with a
// ReferenceNotAllowed user error. A connection Secret lives in mg's own namespace, or in
// the one that mg's class (of kind class, in mg's namespace, where every resource it
// makes is) names in specTemplate.writeConnectionSecretsToNamespace: an admin's field, so
// the consent of that namespace.
func CheckConnectionSecretRef(ctx context.Context, c client.Reader, mg Managed, class ClassKind) (ref common.SecretReference, ok bool, err error) {
	ref, ok = ConnectionSecretRef(mg)
	if !ok || ref.Namespace == mg.GetNamespace() {
		return ref, ok, nil
	}
	classNS, err := classSecretNamespace(ctx, c, mg, class)
	if err != nil {
		return ref, ok, err
	}
	if classNS == ref.Namespace {
		return ref, ok, nil
	}
	return ref, ok, UserErrorf(common.ReasonReferenceNotAllowed,
		"spec.writeConnectionSecretToRef names Secret %s/%s: a connection Secret is kept in the resource's namespace %s%s; leave spec.writeConnectionSecretToRef.namespace empty",
		ref.Namespace, ref.Name, mg.GetNamespace(), classClause(classNS))
}

// classClause names the other namespace a class allows, for CheckConnectionSecretRef's
// message.
func classClause(ns string) string {
	if ns == "" {
		return ""
	}
	return fmt.Sprintf(", or in namespace %s that its class's specTemplate.writeConnectionSecretsToNamespace names", ns)
}

// classSecretNamespace is the namespace mg's class names in
// specTemplate.writeConnectionSecretsToNamespace; "" when mg names no class of kind
// class (in any of its versions) in its own namespace (a class makes its resources in its namespace, so any
// other is not where mg came from), when that class is gone, or when it names none.
func classSecretNamespace(ctx context.Context, c client.Reader, mg Managed, class ClassKind) (string, error) {
	ref := mg.GetManagedSpec().ClassRef
	if ref == nil || class.New == nil || schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind() != class.GVK.GroupKind() {
		return "", nil
	}
	if ref.Namespace != "" && ref.Namespace != mg.GetNamespace() {
		return "", nil
	}
	obj := class.New()
	if err := c.Get(ctx, client.ObjectKey{Namespace: mg.GetNamespace(), Name: ref.Name}, obj); err != nil {
		if err = client.IgnoreNotFound(err); err != nil {
			return "", fmt.Errorf("read class %s %s/%s: %w", ref.Kind, mg.GetNamespace(), ref.Name, err)
		}
		return "", nil
	}
	return obj.GetSpecTemplate().WriteConnectionSecretsToNamespace, nil
}
