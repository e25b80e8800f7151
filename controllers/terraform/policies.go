package terraform

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	"terraplane.io/terraplane/controllers/managed"
	tfmodule "terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/plandoc"
	"terraplane.io/terraplane/internal/planpolicy"
	"terraplane.io/terraplane/internal/resource"
)

// EventPolicyWarning announces a plan that failed a policy's Warn rule.
const EventPolicyWarning = "PolicyWarning"

// policyCheck is what the plan policies said about one plan.
type policyCheck struct {
	results []planpolicy.Result
	// hash identifies the policies (uid and generation) that matched.
	hash string
}

// planPolicies finds the plan policies that match a managed resource; compiled rules
// are kept per policy generation.
type planPolicies struct {
	client client.Client
	cache  *planpolicy.Cache
}

// matching returns the compiled policies that apply to mg of kind gvk, and what rules see
// of its claim and namespace. No policy kinds installed means no policies.
func (p *planPolicies) matching(ctx context.Context, mg resource.Managed, gvk schema.GroupVersionKind) ([]*planpolicy.Policy, planpolicy.Target, error) {
	t := target(mg, gvk)
	var out []*planpolicy.Policy
	cluster := &policyv1.PlanPolicyList{}
	if err := p.client.List(ctx, cluster); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, t, nil
		}
		return nil, t, fmt.Errorf("list plan policies: %w", err)
	}
	for i := range cluster.Items {
		pol := &cluster.Items[i]
		c, _ := p.cache.Compile(pol.Name, "", pol.UID, pol.Generation, pol.Spec) // a rule that does not compile denies
		out = append(out, c)
	}
	for _, ns := range slices.Compact([]string{t.Namespace, t.ClaimNamespace}) {
		if ns == "" {
			continue
		}
		list := &policyv1.NamespacedPlanPolicyList{}
		if err := p.client.List(ctx, list, client.InNamespace(ns)); err != nil && !meta.IsNoMatchError(err) {
			return nil, t, fmt.Errorf("list namespaced plan policies: %w", err)
		}
		for i := range list.Items {
			pol := &list.Items[i]
			c, _ := p.cache.Compile(pol.Name, pol.Namespace, pol.UID, pol.Generation, pol.Spec)
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, t, nil
	}
	if needsLabels(out) {
		nsObj := &corev1.Namespace{}
		if err := p.client.Get(ctx, client.ObjectKey{Name: t.TenantNamespace()}, nsObj); err != nil && !apierrors.IsNotFound(err) {
			return nil, t, fmt.Errorf("read namespace %s: %w", t.TenantNamespace(), err)
		}
		t.NamespaceLabels = nsObj.Labels
	}
	return slices.DeleteFunc(out, func(c *planpolicy.Policy) bool { return !c.Matches(t) }), t, nil
}

// needsLabels reports whether a policy matches or may read namespace labels.
func needsLabels(ps []*planpolicy.Policy) bool {
	return len(ps) > 0 // rules may read namespaceObject.metadata.labels
}

// target is mg as policies match it.
func target(mg resource.Managed, gvk schema.GroupVersionKind) planpolicy.Target {
	spec := mg.GetManagedSpec()
	t := planpolicy.Target{Group: gvk.Group, Kind: gvk.Kind, Namespace: mg.GetNamespace()}
	if spec.ClassRef != nil {
		t.Class = spec.ClassRef.Name
	}
	if spec.ClaimRef != nil {
		t.ClaimNamespace = spec.ClaimRef.Namespace
	}
	return t
}

// input is what rules see of mg besides the plan: the resource, its claim and namespace.
func (p *planPolicies) input(ctx context.Context, mg resource.Managed, t planpolicy.Target, doc *plandoc.Document) (planpolicy.Input, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(mg)
	if err != nil {
		return planpolicy.Input{}, fmt.Errorf("read resource for policies: %w", err)
	}
	unstructured.RemoveNestedField(obj, "metadata", "managedFields")
	in := planpolicy.Input{Plan: doc, Object: obj, Namespace: t.TenantNamespace(), NamespaceLabels: t.NamespaceLabels}
	if ref := mg.GetManagedSpec().ClaimRef; ref != nil && ref.Kind != "" {
		claim := &unstructured.Unstructured{}
		claim.SetAPIVersion(ref.APIVersion)
		claim.SetKind(ref.Kind)
		err := p.client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, claim)
		if err != nil && !apierrors.IsNotFound(err) {
			return in, fmt.Errorf("read claim for policies: %w", err)
		}
		if err == nil {
			unstructured.RemoveNestedField(claim.Object, "metadata", "managedFields")
			in.Claim = claim.Object
		}
	}
	return in, nil
}

// checkPolicies evaluates the plan policies that match the run's resource on its plan,
// before change control decides: a Deny stops the run (no approval lets it through); a
// RequireApproval holds a plan that would be applied automatically; a Warn is announced.
// It reports whether the run stops here.
func (e *run) checkPolicies(ctx context.Context, v verdict) (bool, error) {
	if e.t.policies == nil || v == observeOnly {
		return false, nil
	}
	pols, t, err := e.t.policies.matching(ctx, e.mg, e.t.kind.GVK)
	if err != nil || len(pols) == 0 {
		return err != nil, err
	}
	if e.plan.Document == nil { // a plan saved before plans kept their document: plan again
		if e.plan, err = e.newPlan(ctx); err != nil {
			return true, err
		}
		e.out.plan = e.plan
	}
	doc, err := plandoc.ParsePlan(e.plan.Document)
	if err != nil {
		return true, err
	}
	in, err := e.t.policies.input(ctx, e.mg, t, doc)
	if err != nil {
		return true, err
	}
	results := planpolicy.Evaluate(ctx, pols, in)
	e.out.policies = &policyCheck{results: results, hash: policiesHash(pols)}
	planpolicy.Observe(e.t.kind.GVK.Kind, results)
	return e.enforce(ctx, results, v)
}

// enforce acts on the failed rules: Deny, then RequireApproval, then Warn.
func (e *run) enforce(ctx context.Context, results []planpolicy.Result, v verdict) (bool, error) {
	for _, w := range planpolicy.Failed(results, policyv1.EnforcementWarn) {
		e.t.recorder.Eventf(e.mg, corev1.EventTypeWarning, EventPolicyWarning, "plan %s: %s", e.plan.ID, w)
	}
	if denied := planpolicy.Failed(results, policyv1.EnforcementDeny); len(denied) > 0 {
		if err := e.t.plans.KeepText(ctx, e.mg, e.plan, e.sit.reason, e.ws.Hash); err != nil {
			return true, err
		}
		return true, resource.Refusef(common.ReasonPolicyDenied, "plan %s of %s/%s was denied, so nothing was applied (approving it does not let it through): %s",
			e.plan.ID, strings.ToLower(e.t.kind.GVK.Kind), e.mg.GetName(), joinResults(denied))
	}
	approval := planpolicy.Failed(results, policyv1.EnforcementRequireApproval)
	if len(approval) == 0 || v != applyPlan || e.mg.GetManagedSpec().ApprovedPlan == e.plan.ID {
		return false, nil
	}
	if err := e.t.plans.Save(ctx, e.mg, e.plan, e.sit.reason, e.ws.Hash); err != nil {
		return true, err
	}
	return true, &resource.Held{Reason: common.ReasonPolicyRequiresApproval, Event: common.ReasonPolicyRequiresApproval,
		Message: fmt.Sprintf("%splan %s (%s) needs approval by policy: %s; approve it with spec.approvedPlan: %s (terraplane approve %s)",
			olderApproval(e.mg), e.plan.ID, listChanges(e.plan, 5), joinResults(approval), e.plan.ID, approveTarget(e.mg))}
}

// joinResults names each failed rule with its message.
func joinResults(rs []planpolicy.Result) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, r.String())
	}
	return strings.Join(parts, "; ")
}

// policiesHash identifies a set of policy generations.
func policiesHash(ps []*planpolicy.Policy) string {
	keys := make([]string, 0, len(ps))
	for _, p := range ps {
		keys = append(keys, p.Key)
	}
	slices.Sort(keys)
	sum := sha256.Sum256([]byte(strings.Join(keys, ",")))
	return hex.EncodeToString(sum[:8])
}

// policiesChanged reports whether the resource holds a plan (held by change control, or denied by
// a policy) that the policies matching it now have not seen: a policy was added, edited
// or removed. Drift that management policies leave alone is no such plan: policies are
// not checked on it.
func (e *run) policiesChanged(ctx context.Context) bool {
	r, mg := e.t, e.mg
	st := mg.GetManagedStatus()
	synced := meta.FindStatusCondition(st.Conditions, common.TypeSynced)
	held := synced != nil && synced.Status == metav1.ConditionFalse &&
		(synced.Reason == common.ReasonPolicyDenied || common.IsHoldReason(synced.Reason))
	if r.policies == nil || st.Terraform.Plan == nil || !held {
		return false
	}
	pols, _, err := r.policies.matching(ctx, mg, r.kind.GVK)
	if err != nil {
		return false
	}
	hash := ""
	if len(pols) > 0 {
		hash = policiesHash(pols)
	}
	return hash != st.Terraform.Plan.PoliciesHash
}

// policyResults is the status form of the results: failed rules first, at most
// common.MaxPlannedChanges.
func policyResults(rs []planpolicy.Result) []common.PolicyResult {
	sorted := slices.Clone(rs)
	slices.SortStableFunc(sorted, func(a, b planpolicy.Result) int {
		switch {
		case a.Passed == b.Passed:
			return 0
		case b.Passed:
			return -1
		}
		return 1
	})
	out := make([]common.PolicyResult, 0, min(len(sorted), common.MaxPlannedChanges))
	for _, r := range sorted[:min(len(sorted), common.MaxPlannedChanges)] {
		out = append(out, common.PolicyResult{Policy: r.Policy, Rule: r.Rule, Result: r.Outcome(), Message: r.Message})
	}
	return out
}

// policyWatches are the plan policies, whose changes reach the resources of this kind
// and class they may match.
func (r *connector) policyWatches() []managed.Watch {
	return []managed.Watch{
		{Object: &policyv1.PlanPolicy{}, Map: r.forPolicy},
		{Object: &policyv1.NamespacedPlanPolicy{}, Map: r.forPolicy},
	}
}

// forPolicy maps a policy to the resources of this kind it may match: those of its
// namespace and claimed from it, for a NamespacedPlanPolicy.
func (r *connector) forPolicy(ctx context.Context, obj client.Object) []reconcile.Request {
	var spec policyv1.PlanPolicySpec
	switch p := obj.(type) {
	case *policyv1.PlanPolicy:
		spec = p.Spec
	case *policyv1.NamespacedPlanPolicy:
		spec = p.Spec
	}
	pol := &planpolicy.Policy{Match: spec.Match}
	ns := obj.GetNamespace()
	return r.resourcesIn(ctx, "", func(mg resource.Managed) bool {
		t := target(mg, r.kind.GVK)
		if ns != "" && t.Namespace != ns && t.ClaimNamespace != ns {
			return false
		}
		return pol.MatchesKind(t.Group, t.Kind, t.Class)
	})
}

// createCheck is how a create of the resource is checked by the plan policies that
// match it, when one of them could check its plan (a policy of some resource types
// could not when the workspace declares none of them, and calls no module from
// elsewhere, whose types are unknown before init): inside its one apply, with the check
// returned (engine.Workspace.Check), or, when it cannot be (planFirst), planned first.
// A create can be checked inside its apply when no value of it is sensitive for a
// reason the providers' schemas do not give (module.MarksBeyondSchemas), nor read from
// a Secret, and it declares nothing of terraform's own provider: the gate reads the
// provider processes' plans, which carry no other marks.
func (e *run) createCheck(ctx context.Context) (check *createCheck, planFirst bool, err error) {
	if e.t.policies == nil {
		return nil, false, nil
	}
	pols, t, err := e.t.policies.matching(ctx, e.mg, e.t.kind.GVK)
	if err != nil || len(pols) == 0 {
		return nil, false, err
	}
	types, complete := declaredTypes(e.ws.Files)
	if !slices.ContainsFunc(pols, func(p *planpolicy.Policy) bool { return p.CouldCheck(types, complete) }) {
		return nil, false, nil
	}
	if len(e.ws.SecretVars) > 0 || slices.ContainsFunc(types, builtinTypes) || (&tfmodule.Module{Files: e.ws.Files}).MarksBeyondSchemas() {
		return nil, true, nil
	}
	in, err := e.t.policies.input(ctx, e.mg, t, nil)
	if err != nil {
		return nil, false, err
	}
	cc := planpolicy.CreateCheck{Object: in.Object, Claim: in.Claim, Namespace: in.Namespace, NamespaceLabels: in.NamespaceLabels}
	for _, p := range pols {
		cc.Policies = append(cc.Policies, p.Source)
	}
	raw, err := json.Marshal(cc)
	if err != nil {
		return nil, false, fmt.Errorf("write the create's check: %w", err)
	}
	return &createCheck{raw: raw, hash: policiesHash(pols)}, false, nil
}

// builtinTypes are the types of terraform's own provider, which runs inside terraform:
// no provider connection carries their plans, so no apply can check them.
func builtinTypes(t string) bool { return t == "terraform_data" || t == "terraform_remote_state" }

// createCheck is a create's check inside its apply, as the engine is given it, and the
// policies it holds.
type createCheck struct {
	raw  json.RawMessage
	hash string
}

// passed records what the policies said of a create that passed its check; an apply
// that planned nothing to create was not checked, and reports nothing.
func (e *run) passed(c *createCheck, report json.RawMessage) error {
	if len(report) == 0 {
		return nil
	}
	var results []planpolicy.Result
	if err := json.Unmarshal(report, &results); err != nil {
		return fmt.Errorf("read the create's check: %w", err)
	}
	e.out.policies = &policyCheck{results: results, hash: c.hash}
	planpolicy.Observe(e.t.kind.GVK.Kind, results)
	return nil
}

// declaredTypes are the resource types a workspace's files declare, and whether that is
// all of them (module.DeclaredTypes).
func declaredTypes(files map[string][]byte) ([]string, bool) {
	mod := &tfmodule.Module{Files: files}
	return mod.DeclaredTypes()
}
