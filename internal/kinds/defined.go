package kinds

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/claimschema"
	"terraplane.io/terraplane/internal/dynclaim"
	"terraplane.io/terraplane/internal/registry"
	"terraplane.io/terraplane/internal/resource"
)

// DefinedClaim registers a claim kind that a ClaimDefinition defines: its objects are
// dynclaim objects, and a ModuleClass meets it by passing spec.parameters to the
// module's variables name for name.
func DefinedClaim(gvk, classGVK schema.GroupVersionKind) registry.ClaimKind {
	return registry.ClaimKind{
		GVK:           gvk,
		ClassGVK:      classGVK,
		Defined:       true,
		New:           func() resource.Claim { return dynclaim.NewClaim(gvk) },
		NewClass:      func() resource.PortableClass { return dynclaim.NewClass(classGVK) },
		NewList:       func() client.ObjectList { return dynclaim.NewList(gvk) },
		NewClassList:  func() client.ObjectList { return dynclaim.NewList(classGVK) },
		Configurators: map[schema.GroupVersionKind]registry.Configurator{ModuleGVK: configureDefinedModule},
	}
}

// configureDefinedModule makes a Module for a claim of a defined kind: the class's fixed
// inputs, then the claim's parameters by variable name, then the class's input mappings.
// A parameter <variable>SecretRef of a sensitive variable becomes a variablesFrom entry
// reading that Secret key in the claim's namespace.
func configureDefinedModule(req registry.Request, mg resource.Managed) error {
	claim, ok := req.Claim.(*dynclaim.Claim)
	m, ok2 := mg.(*terraformv1.Module)
	if !ok || !ok2 {
		return fmt.Errorf("configure Module: unexpected types %T, %T", req.Claim, mg)
	}
	params, err := claim.Parameters()
	if err != nil {
		return resource.UserErrorf("InvalidParameters", "spec.parameters: %v", err)
	}
	sensitive := map[string]bool{} // every variable of the class's module, by name
	if class, ok := req.Class.(*terraformv1.ModuleClass); ok {
		for _, v := range class.Status.Variables {
			sensitive[v.Name] = v.Sensitive
		}
	}
	values := map[string]any{}
	var refs []terraformv1.VariableFrom
	for name, v := range params {
		variable, isRef := strings.CutSuffix(name, claimschema.SecretRefSuffix)
		if !isRef || !sensitive[variable] {
			if _, known := sensitive[name]; known || len(sensitive) == 0 {
				values[name] = v // a parameter this module has no variable for (a default kept from an older schema, say) is left out
			}
			continue
		}
		ref, _ := v.(map[string]any)
		secret, _ := ref["name"].(string)
		key, _ := ref["key"].(string)
		refs = append(refs, terraformv1.VariableFrom{Name: variable, ValueFrom: terraformv1.VariableSource{
			SecretKeyRef: &terraformv1.SecretKeySelector{Name: secret, Key: key, Namespace: claim.GetNamespace()}}})
	}
	if err := configureModuleWith(req, mg, values); err != nil {
		return err
	}
	for _, ref := range refs {
		m.Spec.VariablesFrom = setVariableFrom(m.Spec.VariablesFrom, ref)
	}
	return nil
}

// setVariableFrom replaces or adds the entry for ref's variable: the claim's Secret wins
// over the class's.
func setVariableFrom(list []terraformv1.VariableFrom, ref terraformv1.VariableFrom) []terraformv1.VariableFrom {
	for i := range list {
		if list[i].Name == ref.Name {
			list[i] = ref
			return list
		}
	}
	return append(list, ref)
}
