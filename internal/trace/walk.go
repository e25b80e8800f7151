package trace

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// claimChildren: the portable class (and through it the non-portable class), the bound
// managed resource, and the claim's connection Secret.
func (t *Tracer) claimChildren(ctx context.Context, claim *unstructured.Unstructured, w walk) []*Node {
	var out []*Node
	ns := claim.GetNamespace()
	if class := str(claim, "spec", "classRef", "name"); class != "" {
		out = append(out, t.node(ctx, t.Kinds.ClassOf(ctx, claim.GroupVersionKind()), ns, class, w))
	}
	if gvk, rns, name, ok := ref(claim, ns, "spec", "resourceRef"); ok {
		out = append(out, t.node(ctx, gvk, rns, name, w))
	}
	if secret := str(claim, "spec", "writeConnectionSecretToRef", "name"); secret != "" {
		out = append(out, t.secret(ctx, ns, secret))
	}
	return out
}

// classChildren: the class a portable class's classRef names. A non-portable class
// depends on nothing the trace follows (its resources are below the claim).
func (t *Tracer) classChildren(ctx context.Context, class *unstructured.Unstructured, w walk) []*Node {
	if gvk, ns, name, ok := ref(class, class.GetNamespace(), "classRef"); ok {
		return []*Node{t.node(ctx, gvk, ns, name, w)}
	}
	return nil
}

// managedChildren: the Provider(s), the connection Secret, the plan the resource holds
// unapplied, and its runner pool (Tracer.Runner).
func (t *Tracer) managedChildren(ctx context.Context, mg *unstructured.Unstructured, w walk) []*Node {
	var out []*Node
	ns := mg.GetNamespace()
	provider := t.Kinds.ProviderOf(mg.GroupVersionKind())
	if name := str(mg, "spec", "providerRef", "name"); name != "" {
		out = append(out, t.node(ctx, provider, ns, name, w))
	}
	refs, _, _ := unstructured.NestedSlice(mg.Object, "spec", "providerConfigRefs")
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok {
			if name, _ := m["name"].(string); name != "" {
				out = append(out, t.node(ctx, provider, ns, name, w))
			}
		}
	}
	if name := str(mg, "spec", "writeConnectionSecretToRef", "name"); name != "" {
		sns := str(mg, "spec", "writeConnectionSecretToRef", "namespace")
		if sns == "" {
			sns = ns
		}
		out = append(out, t.secret(ctx, sns, name))
	}
	if p := planNode(mg); p != nil {
		out = append(out, p)
	}
	if t.Runner != nil {
		if r := t.Runner(ctx, mg); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// managedStatus is the status every managed resource shares, read from obj.
func managedStatus(obj *unstructured.Unstructured) (common.ManagedStatus, error) {
	var s common.ManagedStatus
	raw, found, err := unstructured.NestedMap(obj.Object, "status")
	if err != nil || !found {
		return s, err
	}
	return s, runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &s)
}

// planNode is the plan mg holds and has not applied, or nil. It is pending when change
// control holds it (as `terraplane approve` and `plan show` decide), and awaits approval
// when setting spec.approvedPlan lets it through.
func planNode(mg *unstructured.Unstructured) *Node {
	st, err := managedStatus(mg)
	if err != nil || st.Terraform.Plan == nil || st.Terraform.LastApply != nil && st.Terraform.LastApply.ID == st.Terraform.Plan.ID {
		return nil
	}
	p := st.Terraform.Plan
	n := &Node{APIVersion: terraformv1.GroupVersion.String(), Kind: "Plan", Namespace: mg.GetNamespace(), Name: resource.PlanName(mg),
		Display: "Plan/" + p.ID, Plan: &Plan{ID: p.ID, Reason: p.Reason, Add: p.Add, Change: p.Change, Destroy: p.Destroy, Replace: p.Replace}}
	if !p.CreatedAt.IsZero() {
		created := p.CreatedAt
		n.Created = &created
	}
	n.Reason, n.Message = "Planned", fmt.Sprintf("%s plan %s, not applied yet", p.Reason, n.Plan.Counts())
	if st.PendingPlan() == nil {
		return n
	}
	n.Plan.Pending = true
	reason, awaiting := holdOf(st)
	n.Reason, n.Plan.AwaitingApproval = reason, awaiting
	n.Message = fmt.Sprintf("%s plan %s held: %s", p.Reason, n.Plan.Counts(), reason)
	if awaiting {
		n.Message += fmt.Sprintf("; approve it with: terraplane approve %s/%s -n %s", mg.GetKind(), mg.GetName(), mg.GetNamespace())
	}
	return n
}

// holdOf says what holds a pending plan: the Synced reason (AwaitingApproval,
// DestructiveChangeRefused, ...), else drift the managementPolicies leave alone; and
// whether an approval lets it through (as `terraplane approve` requires Synced=False).
func holdOf(st common.ManagedStatus) (reason string, awaitingApproval bool) {
	synced := meta.FindStatusCondition(st.Conditions, common.TypeSynced)
	if synced != nil && synced.Status == metav1.ConditionFalse && common.IsHoldReason(synced.Reason) {
		return synced.Reason, synced.Reason != common.ReasonCreateNotAllowed
	}
	return "DriftNotCorrected", false
}

// providerChildren: the Secrets a Provider or ProviderConfig reads credentials from:
// spec.credentialsSecretRef, and each spec.credentials[].secretKeyRef.
func (t *Tracer) providerChildren(ctx context.Context, p *unstructured.Unstructured) []*Node {
	var names []string
	if name := str(p, "spec", "credentialsSecretRef", "name"); name != "" {
		names = append(names, name)
	}
	creds, _, _ := unstructured.NestedSlice(p.Object, "spec", "credentials")
	for _, c := range creds {
		m, _ := c.(map[string]any)
		ref, _ := m["secretKeyRef"].(map[string]any)
		if name, _ := ref["name"].(string); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	var out []*Node
	for _, name := range names {
		out = append(out, t.secret(ctx, p.GetNamespace(), name))
	}
	return out
}
