package resource

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// NamespaceAllowed reports whether an object in namespace target, whose consent is
// allowed, may be referred to from namespace from: always from its own namespace,
// otherwise only when allowed names from (or "*") or its selector matches from's labels.
func NamespaceAllowed(ctx context.Context, c client.Reader, allowed *common.AllowedNamespaces, target, from string) (bool, error) {
	if from == target {
		return true, nil
	}
	if allowed == nil {
		return false, nil
	}
	if slices.Contains(allowed.Names, from) || slices.Contains(allowed.Names, "*") {
		return true, nil
	}
	if allowed.Selector == nil {
		return false, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(allowed.Selector)
	if err != nil {
		return false, UserErrorf("InvalidAllowedNamespaces", "allowedNamespaces.selector of the referenced object is invalid: %v", err)
	}
	if sel.Empty() {
		return true, nil
	}
	var ns corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: from}, &ns); err != nil {
		return false, fmt.Errorf("read namespace %s: %w", from, err)
	}
	return sel.Matches(labels.Set(ns.Labels)), nil
}

// CheckReference is NamespaceAllowed as an error: a reference from namespace from to
// what (described as "<Kind> <namespace>/<name>", named by field) that the target does
// not consent to is a ReferenceNotAllowed user error.
func CheckReference(ctx context.Context, c client.Reader, allowed *common.AllowedNamespaces, field, what, target, from string) error {
	ok, err := NamespaceAllowed(ctx, c, allowed, target, from)
	if err != nil || ok {
		return err
	}
	return UserErrorf(common.ReasonReferenceNotAllowed,
		"%s names %s, which does not allow references from namespace %s; an admin may add %q to its allowedNamespaces, or refer to an object in namespace %s",
		field, what, from, from, from)
}
