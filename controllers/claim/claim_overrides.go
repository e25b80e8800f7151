package claim

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"terraplane.io/terraplane/internal/resource"
)

// TypeParametersOverridden is a claim's condition while its class fixes a value the claim
// sets too: the class's value is the one applied.
const TypeParametersOverridden = "ParametersOverridden"

// ReasonClassValueWins says the class's value wins over the claim's.
const ReasonClassValueWins = "ClassValueWins"

// mirrorOverrides gives the claim a ParametersOverridden condition naming each parameter
// it sets (spec.parameters.x) to a value its resource does not get, because the class
// fixes that input: the class wins, and the claim says so rather than staying silent. A
// Warning event marks the condition's first appearance and each change of it, never a
// reconcile that finds it as it was. Without such a parameter the condition is removed.
func mirrorOverrides(claim resource.Claim, mg resource.Managed) []resource.Note {
	st := claim.GetClaimStatus()
	names := overridden(specOf(claim), forProviderOf(mg))
	if len(names) == 0 {
		meta.RemoveStatusCondition(&st.Conditions, TypeParametersOverridden)
		return nil
	}
	class := "its class"
	if ref := mg.GetManagedSpec().ClassRef; ref != nil {
		class = fmt.Sprintf("%s %s/%s", ref.Kind, ref.Namespace, ref.Name)
	}
	what := "parameter "
	if len(names) > 1 {
		what = "parameters "
	}
	msg := fmt.Sprintf("%s%s: %s fixes the value, and the class's value wins over the claim's; remove it from the claim, or ask the platform team to stop fixing it",
		what, strings.Join(names, ", "), class)
	if !resource.SetCondition(&st.Conditions, claim.GetGeneration(), TypeParametersOverridden, metav1.ConditionTrue, ReasonClassValueWins, msg) {
		return nil
	}
	return []resource.Note{{Type: corev1.EventTypeWarning, Reason: ReasonClassValueWins, Message: msg}}
}

// overridden lists, sorted, the paths of the claim's parameters (spec.parameters.x) whose
// value the resource's inputs (forProvider, by module variable) hold otherwise.
func overridden(spec, inputs map[string]any) []string {
	params, _ := spec["parameters"].(map[string]any)
	var out []string
	for name, v := range params {
		if got, ok := inputs[name]; ok && !equality.Semantic.DeepEqual(got, v) {
			out = append(out, "spec.parameters."+name)
		}
	}
	slices.Sort(out)
	return out
}

// forProviderOf is mg's spec.forProvider as JSON-shaped values (empty without one).
func forProviderOf(mg resource.Managed) map[string]any {
	if mg == nil {
		return nil
	}
	inputs, _ := specOf(mg)["forProvider"].(map[string]any)
	return inputs
}
