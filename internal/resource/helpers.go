package resource

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
)

// Finalizer is put on claims and managed resources so that deletion runs through the reconcilers.
const Finalizer = "terraplane.io/finalizer"

// ConnectionSecretRef is where mg writes its connection Secret (namespace defaulting to
// mg's); ok is false when mg writes none (spec.writeConnectionSecretToRef is empty).
func ConnectionSecretRef(mg Managed) (ref common.SecretReference, ok bool) {
	r := mg.GetManagedSpec().WriteConnectionSecretToRef
	if r == nil {
		return common.SecretReference{}, false
	}
	ref = common.SecretReference{Name: r.Name, Namespace: r.Namespace}
	if ref.Namespace == "" {
		ref.Namespace = mg.GetNamespace()
	}
	return ref, true
}

// SetCondition sets a condition and reports whether its status, reason or message changed.
func SetCondition(conds *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, message string) bool {
	old := meta.FindStatusCondition(*conds, typ)
	changed := old == nil || old.Status != status || old.Reason != reason || old.Message != message
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: generation,
	})
	return changed
}

// SyncBindingPhase derives a managed resource's phase from its claimRef: Unbound without
// one, Bound once a claim set it. Released is the claim reconciler's to set.
func SyncBindingPhase(mg Managed) {
	st := mg.GetManagedStatus()
	switch {
	case mg.GetManagedSpec().ClaimRef == nil:
		st.BindingPhase = common.BindingPhaseUnbound
	case st.BindingPhase == "" || st.BindingPhase == common.BindingPhaseUnbound:
		st.BindingPhase = common.BindingPhaseBound
	}
}

// IsReady reports whether conds hold Ready=True.
func IsReady(conds []metav1.Condition) bool {
	return meta.IsStatusConditionTrue(conds, common.TypeReady)
}

// ManagedLabel on a connection Secret holds the UID of the managed resource that wrote it.
const ManagedLabel = "terraplane.io/managed-uid"

// ConnectionSecretType is the type of connection Secrets.
const ConnectionSecretType = "connection.terraplane.io/v1alpha1"

// Adopting reports whether mg takes over infrastructure that already exists.
func Adopting(mg Managed) bool {
	return len(mg.GetManagedSpec().Imports) > 0 || mg.GetAnnotations()[common.AdoptedAnnotation] == "true"
}

// Paused reports whether mg is paused.
func Paused(obj interface{ GetAnnotations() map[string]string }) bool {
	return obj.GetAnnotations()[common.PausedAnnotation] == "true"
}

// StateSuffix is the kubernetes state backend's secret_suffix for mg: its UID without
// dashes (the backend refuses suffixes ending in "-<number>", which a UID may).
func StateSuffix(mg interface{ GetUID() types.UID }) string {
	return strings.ReplaceAll(string(mg.GetUID()), "-", "")
}

// StateSecretName is the Secret the kubernetes state backend keeps mg's state in.
func StateSecretName(mg interface{ GetUID() types.UID }) string {
	return "tfstate-default-" + StateSuffix(mg)
}

// PlanSecretName is the Secret that holds mg's saved plan while it awaits approval.
func PlanSecretName(mg interface{ GetUID() types.UID }) string {
	return "tfplan-" + StateSuffix(mg)
}

// PlanName is the Plan (terraform.terraplane.io) that holds the text of mg's latest plan
// with changes, for reviewers; it shares the plan Secret's name.
func PlanName(mg interface{ GetUID() types.UID }) string { return PlanSecretName(mg) }

// Keys and label of plan Secrets.
const (
	// PlanLabel marks plan Secrets (kept out of the controller's cache).
	PlanLabel = "terraplane.io/plan"
	// PlanFileKey holds the saved plan (every variable's value, secret ones too) until
	// it is applied or replaced.
	PlanFileKey = "tfplan"
	// PlanTextKey held the plan as terraform shows it, sensitive values masked, in plan
	// Secrets written before the text moved to Plan objects; it is read, never written.
	PlanTextKey = "plan.txt"
	// PlanMetaKey holds what the plan does and the inputs it was made from (JSON).
	PlanMetaKey = "plan.json"
)
