package terraform

import (
	"context"
	"fmt"
	"slices"
	"strings"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/render"
	"terraplane.io/terraplane/internal/resource"
)

// EventPlanAwaitingApproval announces a plan that waits for approval.
const EventPlanAwaitingApproval = "PlanAwaitingApproval"

// verdict is what change control lets happen to a plan with changes.
type verdict int

const (
	// applyPlan: apply it now.
	applyPlan verdict = iota
	// holdPlan: keep it until someone acts; the error says why and how.
	holdPlan
	// observeOnly: report it as drift and apply nothing (managementPolicies).
	observeOnly
)

// decide applies change control to a plan with changes, made for a resource standing
// where s says: management policies first, then the adoption rules of a first plan, the
// destructive-change guardrail and the approval policy. Approving the plan's exact id
// lets it through all but the management policies.
func decide(s situation, mg resource.Managed, plan *engine.Plan) (verdict, error) {
	spec := mg.GetManagedSpec()
	reason := s.reason
	policy := spec.ChangePolicy
	importOnly := onlyImports(plan)
	switch {
	case reason == common.PlanCreate && !policy.Allows(common.ManagementCreate) && !importOnly:
		return holdPlan, resource.Holdf(common.ReasonCreateNotAllowed,
			"the external resource does not exist and managementPolicies do not include Create, so nothing was created (plan %s: %s)", plan.ID, listChanges(plan, 3))
	case reason != common.PlanCreate && !policy.Allows(common.ManagementUpdate) && !importOnly:
		return observeOnly, nil
	case len(plan.Gone) > 0 && !policy.Allows(common.ManagementCreate):
		return observeOnly, nil // deleted outside Terraform: recreating it is a create
	}
	if spec.ApprovedPlan == plan.ID {
		return applyPlan, nil
	}
	if err := stateMissing(mg, plan); err != nil {
		return holdPlan, err
	}
	first := s.creating
	if len(plan.ProviderChanges) > 0 && !first && !s.revisionMoves {
		return holdPlan, providerUpgrade(mg, plan)
	}
	if first && s.adopting {
		if err := adoptionRefusal(mg, plan); err != nil {
			return holdPlan, err
		}
	}
	if destructive := destructiveChanges(plan, s.harmless); len(destructive) > 0 && !first && !policy.AllowsDestructive() {
		return holdPlan, destructiveRefusal(mg, plan, destructive)
	}
	if policy.ApprovalOf() == common.ApprovalManual {
		return holdPlan, awaitingApproval(mg, plan)
	}
	return applyPlan, nil
}

// decide lets change control decide on the plan: apply it, hold it (saved, to be
// approved) or only report it as drift; the plan policies have their say first
// (checkPolicies).
func (e *run) decide(ctx context.Context) (next, error) {
	verdict, err := decide(e.sit, e.mg, e.plan)
	if stop, perr := e.checkPolicies(ctx, verdict); stop {
		return finished, perr
	}
	switch verdict {
	case observeOnly:
		e.out.drift = true
		return finished, e.t.plans.KeepText(ctx, e.mg, e.plan, e.sit.reason, e.ws.Hash)
	case holdPlan:
		if serr := e.t.plans.Save(ctx, e.mg, e.plan, e.sit.reason, e.ws.Hash); serr != nil {
			return finished, serr
		}
		return finished, err
	}
	return proceed, nil
}

// stateMissing refuses a plan made from an empty state for a resource that records
// resources in it: the state Secret was deleted, or a restore left it out, and applying
// would create everything again. The state counts as it was stored, before the refresh:
// objects the refresh found deleted outside Terraform are drift, which the plan
// recreates, not lost state. Adopting with spec.imports, the create-again annotation, or
// approving this plan lets it through.
func stateMissing(mg resource.Managed, plan *engine.Plan) error {
	recorded := mg.GetManagedStatus().Terraform.Resources
	if storedResources(plan) != 0 || recorded == 0 || len(mg.GetManagedSpec().Imports) > 0 || mg.GetAnnotations()[common.CreateAgainAnnotation] == "true" {
		return nil
	}
	return resource.Refusef(common.ReasonStateMissing,
		"the Terraform state is empty, but this resource recorded %d resource(s) in it, so nothing was applied: plan %s would create them again (%s). Restore the state Secret %s/%s from a backup, adopt what exists with spec.imports, or create everything again with annotation %s=true or by approving this exact plan with spec.approvedPlan: %s",
		recorded, plan.ID, listChanges(plan, 3), mg.GetNamespace(), resource.StateSecretName(mg), common.CreateAgainAnnotation, plan.ID)
}

// storedResources is how many resource instances the state held as stored, before the
// plan's refresh dropped those it found deleted outside Terraform.
func storedResources(plan *engine.Plan) int {
	return plan.PriorResources + len(plan.Gone)
}

// providerUpgrade holds a plan made with provider versions outside the resource's
// dependency lock that no new class revision brings: versions the module's constraints
// now ask for, or that replace a locked version no longer offered. It is applied, and the
// resource moves to them, only once approved; until then every run installs the locked
// versions. (A revision's provider versions roll out with it, in waves.)
func providerUpgrade(mg resource.Managed, plan *engine.Plan) error {
	moved := make([]string, 0, len(plan.ProviderChanges))
	for _, c := range plan.ProviderChanges {
		moved = append(moved, c.String())
	}
	changes := "no resource changes"
	if len(plan.Changes) > 0 || plan.OutputsChange {
		changes = fmt.Sprintf("%s: %s", engine.CountChanges(plan.Changes), listChanges(plan, 5))
	}
	return &resource.Held{Reason: common.ReasonProviderUpgrade, Event: common.ReasonProviderUpgrade,
		Message: fmt.Sprintf("%splan %s moves providers outside the dependency lock (%s; %s), so nothing was applied and the locked versions stay installed; approve it with spec.approvedPlan: %s (terraplane approve %s)",
			olderApproval(mg), plan.ID, strings.Join(moved, ", "), changes, plan.ID, approveTarget(mg))}
}

// destructiveChanges are the plan's deletions and replacements, but for replacements of
// harmless module addresses and of tainted objects: a tainted object is one whose create
// did not finish, which terraform always replaces and nothing can have used.
func destructiveChanges(plan *engine.Plan, harmless []string) []engine.Change {
	var out []engine.Change
	for _, c := range plan.Destructive() {
		inModule := strings.TrimPrefix(c.Address, "module."+render.ModuleName+".")
		if c.Replaces() && (c.Tainted || slices.Contains(harmless, inModule)) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// adoptionRefusal holds the first plan of a resource that adopts what exists: with
// imports it may create but not destroy; with migrated state it must change nothing.
func adoptionRefusal(mg resource.Managed, plan *engine.Plan) error {
	changes := plan.Destructive()
	what := "destroy or replace"
	if mg.GetAnnotations()[common.AdoptedAnnotation] == "true" {
		changes, what = plan.Changes, "change"
	}
	if len(changes) == 0 {
		return nil
	}
	return resource.Refusef(common.ReasonAdoptionRefused,
		"adopting the existing infrastructure was stopped and nothing was applied: plan %s would %s:\n%s\nMake spec.forProvider match what exists or fix spec.imports, or approve this exact plan with spec.approvedPlan: %s",
		plan.ID, what, changeLines(changes), plan.ID)
}

// destructiveRefusal refuses a plan that destroys or replaces what exists, and says
// whether spec.approvedPlan names an older plan.
func destructiveRefusal(mg resource.Managed, plan *engine.Plan, destructive []engine.Change) error {
	return resource.Refusef(common.ReasonDestructiveChangeRefused,
		"%splan %s would destroy or replace what exists, so nothing was applied:\n%s\nApprove this exact plan with spec.approvedPlan: %s (terraplane approve %s), or set spec.destructiveChanges: Allow",
		olderApproval(mg), plan.ID, changeLines(destructive), plan.ID, approveTarget(mg))
}

// awaitingApproval says the plan waits, and whether spec.approvedPlan names an older one.
func awaitingApproval(mg resource.Managed, plan *engine.Plan) error {
	return &resource.Held{Reason: common.ReasonAwaitingApproval, Event: EventPlanAwaitingApproval,
		Message: fmt.Sprintf("%splan %s (%s) awaits approval: %s; approve it with spec.approvedPlan: %s (terraplane approve %s)",
			olderApproval(mg), plan.ID, engine.CountChanges(plan.Changes), listChanges(plan, 5), plan.ID, approveTarget(mg))}
}

// olderApproval says that spec.approvedPlan names a plan other than the one decided on
// (decide only asks when it does); empty when it names none, or names the plan applied
// last: that approval is history, not an error.
func olderApproval(mg resource.Managed) string {
	approved := mg.GetManagedSpec().ApprovedPlan
	if last := mg.GetManagedStatus().Terraform.LastApply; approved == "" || last != nil && last.ID == approved {
		return ""
	}
	return fmt.Sprintf("spec.approvedPlan %s is not the pending plan, so nothing was applied. ", approved)
}

// onlyImports reports whether a plan only imports existing objects.
func onlyImports(plan *engine.Plan) bool {
	if plan.OutputsChange || len(plan.Changes) == 0 {
		return false
	}
	for _, c := range plan.Changes {
		if !c.Importing || len(c.Actions) != 1 || c.Actions[0] != "no-op" {
			return false
		}
	}
	return true
}

// changeLines are "address: actions" lines.
func changeLines(changes []engine.Change) string {
	lines := make([]string, 0, len(changes))
	for _, c := range changes {
		lines = append(lines, "  "+c.Address+": "+strings.Join(c.Actions, ", "))
	}
	return strings.Join(lines, "\n")
}

// listChanges names at most n changes on one line.
func listChanges(plan *engine.Plan, n int) string {
	if len(plan.Changes) == 0 {
		return "outputs change"
	}
	parts := make([]string, 0, n+1)
	for i, c := range plan.Changes {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(plan.Changes)-n))
			break
		}
		parts = append(parts, c.Address+" ("+strings.Join(c.Actions, ", ")+")")
	}
	return strings.Join(parts, ", ")
}

// driftMessage says what drift a plan found: the objects deleted outside Terraform
// first, then the plan and its changes.
func driftMessage(plan *engine.Plan) string {
	msg := fmt.Sprintf("plan %s (%s): %s", plan.ID, engine.CountChanges(plan.Changes), listChanges(plan, 5))
	if len(plan.Gone) > 0 {
		msg = "deleted outside Terraform: " + strings.Join(plan.Gone, ", ") + "; " + msg
	}
	return msg
}

// goneMessage names the objects a plan's refresh found deleted outside Terraform, and
// what becomes of them.
func goneMessage(plan *engine.Plan, what string) string {
	return fmt.Sprintf("deleted outside Terraform, %s: %s (plan %s)", what, strings.Join(plan.Gone, ", "), plan.ID)
}

// approveTarget is how `terraplane approve` names mg.
func approveTarget(mg resource.Managed) string {
	return fmt.Sprintf("%s/%s -n %s", strings.ToLower(mg.GetObjectKind().GroupVersionKind().Kind), mg.GetName(), mg.GetNamespace())
}
