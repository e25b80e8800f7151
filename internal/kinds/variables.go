package kinds

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// resolveModuleVariables reads a Module's variablesFrom: Secret keys become sensitive
// variables, ConfigMap keys plain ones.
func resolveModuleVariables(ctx context.Context, c client.Client, mg resource.Managed) (*registry.Variables, error) {
	m := mg.(*terraformv1.Module)
	vars := &registry.Variables{Plain: map[string]string{}, Secret: map[string]string{}}
	for _, v := range m.Spec.VariablesFrom {
		if err := checkVariableNamespace(ctx, c, m, v); err != nil {
			return nil, err
		}
		value, source, err := readVariableSource(ctx, c, m.Namespace, v)
		if err != nil {
			return nil, err
		}
		if v.ValueFrom.SecretKeyRef != nil {
			vars.Secret[v.Name] = value
		} else {
			vars.Plain[v.Name] = value
		}
		vars.Sources = append(vars.Sources, source)
	}
	sort.Strings(vars.Sources)
	return vars, nil
}

// moduleWatchedObjects names the objects a Module reads: its variablesFrom, a ConfigMap
// holding its module, a git or OCI source's credentials, and the ProviderConfigs of its
// providerConfigRefs.
func moduleWatchedObjects(mg resource.Managed) []string {
	var names []string
	for _, ref := range mg.(*terraformv1.Module).Spec.ProviderConfigRefs {
		names = append(names, "ProviderConfig/"+ref.Name)
	}
	switch src := mg.(*terraformv1.Module).Spec.Source; {
	case src.ConfigMap != nil:
		names = append(names, "ConfigMap/"+src.ConfigMap.Name)
	case src.Git != nil && src.Git.SecretRef != nil:
		names = append(names, "Secret/"+src.Git.SecretRef.Name)
	case src.OCI != nil && src.OCI.SecretRef != nil:
		names = append(names, "Secret/"+src.OCI.SecretRef.Name)
	}
	for _, v := range mg.(*terraformv1.Module).Spec.VariablesFrom {
		switch from := v.ValueFrom; {
		case from.SecretKeyRef != nil:
			names = append(names, "Secret/"+from.SecretKeyRef.Name)
		case from.ConfigMapKeyRef != nil:
			names = append(names, "ConfigMap/"+from.ConfigMapKeyRef.Name)
		}
	}
	return names
}

// readVariableSource reads one variable's Secret or ConfigMap key, and names the object's
// version it came from.
func readVariableSource(ctx context.Context, c client.Client, namespace string, v terraformv1.VariableFrom) (value, source string, err error) {
	var obj client.Object
	var name, key, kind string
	var data func() (string, bool)
	switch from := v.ValueFrom; {
	case from.SecretKeyRef != nil:
		s := &corev1.Secret{}
		obj, kind, name, key = s, "Secret", from.SecretKeyRef.Name, from.SecretKeyRef.Key
		if from.SecretKeyRef.Namespace != "" {
			namespace = from.SecretKeyRef.Namespace
		}
		data = func() (string, bool) { b, ok := s.Data[key]; return string(b), ok }
	case from.ConfigMapKeyRef != nil:
		cm := &corev1.ConfigMap{}
		obj, kind, name, key = cm, "ConfigMap", from.ConfigMapKeyRef.Name, from.ConfigMapKeyRef.Key
		data = func() (string, bool) { s, ok := cm.Data[key]; return s, ok }
	default:
		return "", "", resource.UserErrorf("InvalidVariablesFrom", "variablesFrom %s names neither a Secret nor a ConfigMap key", v.Name)
	}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return "", "", resource.UserErrorf("VariableSourceNotFound", "variable %s: %s %s/%s does not exist; create it with key %q", v.Name, kind, namespace, name, key)
		}
		return "", "", fmt.Errorf("get %s %s for variable %s: %w", kind, name, v.Name, err)
	}
	value, ok := data()
	if !ok {
		return "", "", resource.UserErrorf("VariableSourceNotFound", "variable %s: %s %s/%s has no key %q", v.Name, kind, namespace, name, key)
	}
	return value, fmt.Sprintf("%s/%s@%s", kind, name, obj.GetResourceVersion()), nil
}

// checkVariableNamespace lets a Module read a variable's Secret in its own namespace, or
// in the namespace of the claim it is bound to (spec.claimRef), which is how a claim's
// Secret reaches the Module made for it; anywhere else is ReferenceNotAllowed.
func checkVariableNamespace(ctx context.Context, c client.Reader, m *terraformv1.Module, v terraformv1.VariableFrom) error {
	ref := v.ValueFrom.SecretKeyRef
	if ref == nil || ref.Namespace == "" || ref.Namespace == m.Namespace {
		return nil
	}
	refused := func(why string) error {
		return resource.UserErrorf(common.ReasonReferenceNotAllowed,
			"variablesFrom %s names Secret %s/%s: a Module reads Secrets in its own namespace (%s), or in the namespace of the claim bound to it, and %s",
			v.Name, ref.Namespace, ref.Name, m.Namespace, why)
	}
	claim := m.Spec.ClaimRef
	if claim == nil || claim.Namespace != ref.Namespace {
		return refused(fmt.Sprintf("no claim in namespace %s is bound to this Module", ref.Namespace))
	}
	return checkBoundClaim(ctx, c, m, v, refused)
}

// checkBoundClaim checks that the claim m's spec.claimRef names exists, is the one bound
// (same UID), and names m back in its spec.resourceRef: a claimRef alone is only the
// Module's word. A claim that has not recorded m yet (it is being provisioned) is waited for.
func checkBoundClaim(ctx context.Context, c client.Reader, m *terraformv1.Module, v terraformv1.VariableFrom, refused func(string) error) error {
	ref := m.Spec.ClaimRef
	what := fmt.Sprintf("%s %s/%s (spec.claimRef)", ref.Kind, ref.Namespace, ref.Name)
	if ref.APIVersion == "" || ref.Kind == "" || ref.UID == "" {
		return refused(what + " is not a bound claim: it names no apiVersion, kind or UID")
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(ref.APIVersion)
	u.SetKind(ref.Kind)
	if err := c.Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, u); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return refused(what + " does not exist")
		}
		return fmt.Errorf("get claim for variable %s: %w", v.Name, err)
	}
	if u.GetUID() != ref.UID {
		return refused(what + " is not the claim this Module was bound to (another UID)")
	}
	back, found, _ := unstructured.NestedStringMap(u.Object, "spec", "resourceRef")
	if !found {
		return resource.Waitf("WaitingForClaim", "variable %s: waiting for %s to record this Module in its spec.resourceRef", v.Name, what)
	}
	if back["apiVersion"] != terraformv1.GroupVersion.String() || back["kind"] != "Module" || back["namespace"] != m.Namespace || back["name"] != m.Name {
		return refused(what + " names another resource in its spec.resourceRef")
	}
	return nil
}
