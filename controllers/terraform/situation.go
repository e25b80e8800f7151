package terraform

import (
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// situation is where one resource stands when a reconcile connects: what its status,
// spec and annotations say about the run to come, read once. It is the only place those
// questions are asked; the steps read its fields, and change them only as the run
// changes what they describe (markCreating records a create in flight).
type situation struct {
	// creating: the next apply is the resource's first.
	creating bool
	// pending: a create was recorded as in flight and its outcome never settled.
	pending bool
	// adopting: the resource adopts what exists (spec.imports, or migrated state).
	adopting bool
	// abandoned: once deleted, the resource is released without destroying anything.
	abandoned bool
	// held is the plan with changes that was held or observed and never applied; nil
	// when there is none.
	held *common.PlanSummary
	// approved: spec.approvedPlan names the held plan, made from the inputs as rendered.
	approved bool
	// reason is why a plan made now is made: a create, an update, or a drift check.
	reason common.PlanReason
	// due says why terraform must run now; dueNot when it need not.
	due dueReason
	// wait is how long until the next drift check, when the run is not due.
	wait time.Duration
	// harmless names the module addresses whose replacement destroys nothing outside
	// Terraform (the kind's).
	harmless []string
	// revisionMoves: the resource is moving to another class revision (spec.revision is
	// not the one it ran), whose provider versions it takes with it.
	revisionMoves bool
}

// dueReason is why terraform must run.
type dueReason string

const (
	dueNot          dueReason = ""
	dueNeverPlanned dueReason = "never planned"
	dueRequested    dueReason = "a plan was requested"
	dueApproved     dueReason = "the held plan was approved"
	dueHeldStale    dueReason = "the held plan's inputs changed"
	dueHeldEdited   dueReason = "the spec changed while a plan was held"
	dueInputs       dueReason = "the inputs changed"
	dueRevision     dueReason = "the class revision changed"
	dueUnsettled    dueReason = "the last run did not succeed"
	dueDriftCheck   dueReason = "the drift interval passed"
)

// facts are what a situation is derived from besides the resource itself.
type facts struct {
	// hash is the hash of the inputs as rendered now; empty when nothing was rendered (a
	// deletion).
	hash string
	// driftInterval is how often the resource is planned while unchanged.
	driftInterval time.Duration
	// now is the time of the reconcile.
	now time.Time
	// harmless: see situation.harmless.
	harmless []string
}

// situate derives mg's situation from its status, spec and annotations and f.
func situate(mg resource.Managed, f facts) situation {
	st, spec := mg.GetManagedStatus(), mg.GetManagedSpec()
	tf := st.Terraform
	s := situation{
		creating:      tf.InputsHash == "" && tf.LastApplyTime == nil,
		pending:       mg.GetAnnotations()[common.CreatePendingAnnotation] != "",
		adopting:      resource.Adopting(mg),
		abandoned:     mg.GetAnnotations()[common.AbandonAnnotation] == "true",
		held:          st.PendingPlan(),
		harmless:      f.harmless,
		revisionMoves: spec.Revision != "" && spec.Revision != st.Revision,
	}
	s.approved = s.held != nil && s.held.ID == spec.ApprovedPlan && s.held.InputsHash == f.hash
	switch {
	case s.creating:
		s.reason = common.PlanCreate
	case tf.InputsHash != f.hash:
		s.reason = common.PlanUpdate
	default:
		s.reason = common.PlanDrift
	}
	s.due, s.wait = dueFor(mg, s.held, f)
	return s
}

// dueFor says why terraform must run: never planned, a plan requested, a held plan
// approved, stale or edited, the inputs or the class revision changed, the last run did
// not succeed, or the drift interval passed. Otherwise it says when to look again.
func dueFor(mg resource.Managed, held *common.PlanSummary, f facts) (dueReason, time.Duration) {
	st, spec := mg.GetManagedStatus(), mg.GetManagedSpec()
	tf := st.Terraform
	synced := meta.FindStatusCondition(st.Conditions, common.TypeSynced)
	requested := mg.GetAnnotations()[common.RequestedAtAnnotation]
	switch {
	case tf.LastPlanTime == nil:
		return dueNeverPlanned, 0
	case requested != "" && requested != tf.LastHandledRequest:
		return dueRequested, 0
	case held != nil && spec.ApprovedPlan == held.ID:
		return dueApproved, 0
	case held != nil && held.InputsHash != f.hash:
		return dueHeldStale, 0
	case held != nil && (synced == nil || synced.ObservedGeneration != mg.GetGeneration()):
		return dueHeldEdited, 0
	case held == nil && tf.InputsHash != f.hash:
		return dueInputs, 0
	case held == nil && st.Revision != spec.Revision:
		return dueRevision, 0
	case held == nil && (!meta.IsStatusConditionTrue(st.Conditions, common.TypeSynced) || !resource.IsReady(st.Conditions)):
		return dueUnsettled, 0
	}
	next := tf.LastPlanTime.Add(f.driftInterval)
	if wait := next.Sub(f.now); wait > 0 {
		return dueNot, wait + jitter(f.driftInterval)
	}
	return dueDriftCheck, 0
}

// jitter spreads drift checks over a tenth of the interval.
func jitter(d time.Duration) time.Duration {
	return time.Duration(rand.Int64N(int64(d)/10 + 1))
}

// createsDirectly reports whether the resource is created with one combined
// plan-and-apply: its first apply, applied automatically, with nothing to adopt and
// creating allowed.
func (s situation) createsDirectly(mg resource.Managed) bool {
	policy := mg.GetManagedSpec().ChangePolicy
	return s.creating && !s.adopting && policy.ApprovalOf() == common.ApprovalAutomatic &&
		policy.Allows(common.ManagementCreate) && mg.GetManagedSpec().ApprovedPlan == ""
}

// looksForUpgrades reports whether a plan looks for newer provider versions than the
// resource's lock holds, for its class to offer as a new revision: once it exists (a
// create uses its module's lock), may be updated, and was made from a class. The plan
// itself is made with the locked versions.
func (s situation) looksForUpgrades(mg resource.Managed) bool {
	spec := mg.GetManagedSpec()
	return !s.creating && spec.ClassRef != nil && spec.ChangePolicy.Allows(common.ManagementUpdate)
}

// onlyChecksDrift reports whether a plan made now checks for drift and nothing else:
// the resource is settled, holds no plan, and its inputs and class revision are those
// it last ran with. The engine may then answer it by rereading (PlanOptions.Reread).
func (s situation) onlyChecksDrift(mg resource.Managed) bool {
	conds := mg.GetManagedStatus().Conditions
	settled := meta.IsStatusConditionTrue(conds, common.TypeSynced) && resource.IsReady(conds)
	return s.reason == common.PlanDrift && s.held == nil && !s.revisionMoves && settled &&
		(s.due == dueDriftCheck || s.due == dueRequested)
}

// destroysNothing reports whether a deleted resource has nothing of its own to destroy:
// it adopted what exists, and the adoption never went through.
func (s situation) destroysNothing() bool {
	return s.creating && s.adopting
}
