package classrevision

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// Events of rollouts, on the class.
const (
	EventRolloutStarted  = "RolloutStarted"
	EventRolloutWave     = "RolloutWave"
	EventRolloutComplete = "RolloutComplete"
)

// waitingReasons are the Synced=False reasons of a resource that waits for someone or
// something, rather than failed: they hold a batch back without pausing the rollout.
var waitingReasons = []string{common.ReasonAwaitingApproval, common.ReasonProviderUpgrade, common.ReasonStateLocked}

// rolloutInput is what one step of a rollout works from.
type rolloutInput struct {
	// target is the revision to roll out; policy the class's rollout policy.
	target string
	policy *common.RolloutPolicy
	// resumed is the class's terraplane.io/rollout-resumed-at annotation.
	resumed string
	now     metav1.Time
}

// step moves the rollout of in.target on by one look at the fleet: it starts a new one
// when the target changed, resumes on request, pauses on the first failure (or on
// request), lets the next batch onto the target once the one before runs it Ready and
// Synced (the canary first), and completes when every resource that follows new
// revisions runs it. It returns the rollout and the events to send.
func step(prev *common.RolloutStatus, in rolloutInput, fleet []member) (*common.RolloutStatus, []resource.Note) {
	var notes []resource.Note
	st := &common.RolloutStatus{Revision: in.target, StartedAt: in.now, ResumedAt: in.resumed}
	if prev != nil && prev.Revision == in.target {
		st = prev.DeepCopy()
	} else {
		notes = append(notes, note(corev1.EventTypeNormal, EventRolloutStarted, "rolling out revision %s", in.target))
	}
	v := view(st, fleet)
	if in.resumed != st.ResumedAt {
		st.ResumedAt = in.resumed
		if st.Paused == common.ReasonRolloutFailed {
			st.Skipped = append(st.Skipped, v.failing...)
			st.Paused, st.Message = "", ""
			v = view(st, fleet)
		}
	}
	st.Total, st.Updated = int32(v.total), int32(v.updated)
	switch {
	case len(v.failing) > 0 && st.Paused != common.ReasonRolloutFailed && st.CompletedAt == nil:
		st.Paused = common.ReasonRolloutFailed
		st.Message = fmt.Sprintf("revision %s failed on %s; %d of %d resources run it. Undo it (terraplane rollout undo), or fix it and resume (terraplane rollout resume)",
			in.target, strings.Join(v.failures, "; "), v.updated, v.total)
		notes = append(notes, note(corev1.EventTypeWarning, common.TypeRolloutPaused, "%s", st.Message))
	case in.policy != nil && in.policy.Paused && st.Paused == "":
		st.Paused, st.Message = common.ReasonRolloutPauseRequested, "specTemplate.rollout.paused is true"
		notes = append(notes, note(corev1.EventTypeNormal, common.TypeRolloutPaused, "the rollout of revision %s is paused on request", in.target))
	case (in.policy == nil || !in.policy.Paused) && st.Paused == common.ReasonRolloutPauseRequested:
		st.Paused, st.Message = "", ""
	}
	if st.Paused == "" && len(v.inFlight) == 0 && len(v.waiting) > 0 {
		n := in.policy.MaxUnavailableOf(v.total)
		if st.Wave == 0 && in.policy.CanaryOf() > 0 {
			n = in.policy.CanaryOf()
		}
		wave := v.waiting[:min(n, len(v.waiting))]
		st.Admitted = append(st.Admitted, wave...)
		st.Wave++
		notes = append(notes, note(corev1.EventTypeNormal, EventRolloutWave, "wave %d of revision %s: %s", st.Wave, in.target, strings.Join(withClaims(wave, fleet), ", ")))
		v = view(st, fleet)
	}
	if st.CompletedAt == nil && len(v.waiting)+len(v.inFlight)+len(v.failing) == 0 {
		st.CompletedAt = &in.now
		notes = append(notes, note(corev1.EventTypeNormal, EventRolloutComplete, "revision %s runs on all %d resources that follow new revisions", in.target, v.total))
		if v.total == 0 && (prev == nil || prev.Revision != in.target) {
			notes = nil // a revision that reaches no resource is news to nobody
		}
	}
	return st, notes
}

// fleetView sorts the resources that follow new revisions by where they stand in a rollout.
type fleetView struct {
	total, updated int
	// waiting: not let onto the target yet, in the order they will be (by claim, else by
	// name); inFlight: let on, not running it Ready and Synced yet; failing: let on and
	// failed (failures says how).
	waiting, inFlight, failing, failures []string
}

// view is where the fleet stands in st. Only the resources still to move are sorted:
// a settled fleet of thousands is counted, not sorted.
func view(st *common.RolloutStatus, fleet []member) fleetView {
	var v fleetView
	var waiting, inFlight, failing []member
	admittedSet, skipped := setOf(st.Admitted), setOf(st.Skipped)
	for _, m := range fleet {
		if !m.automatic {
			continue
		}
		v.total++
		admitted := admittedSet[m.name]
		switch {
		case m.runs == st.Revision && m.want == st.Revision && m.ready:
			v.updated++
		case skipped[m.name]:
		case m.want == st.Revision && m.failed != "":
			failing = append(failing, m)
		case admitted || m.want == st.Revision:
			if admitted {
				inFlight = append(inFlight, m)
			}
		case m.want != "":
			waiting = append(waiting, m)
		}
	}
	v.waiting, v.inFlight = names(waiting), names(inFlight)
	v.failing = names(failing)
	for _, m := range failing {
		v.failures = append(v.failures, m.describe())
	}
	return v
}

// names sorts members by claim, else by name, and names them in that order.
func names(members []member) []string {
	slices.SortFunc(members, func(a, b member) int { return cmp.Or(strings.Compare(a.key, b.key), strings.Compare(a.name, b.name)) })
	var out []string
	for _, m := range members {
		out = append(out, m.name)
	}
	return out
}

// setOf is names as a set.
func setOf(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

// withClaims names each of the resources names with the claim it serves, when it serves
// one: "db-7f3c (claim team-a/orders)".
func withClaims(names []string, fleet []member) []string {
	claims := map[string]string{}
	for _, m := range fleet {
		if m.key != m.name {
			claims[m.name] = m.key
		}
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n
		if c, ok := claims[n]; ok {
			out[i] = n + " (claim " + c + ")"
		}
	}
	return out
}

// describe names m and its failure, with its claim when it has one.
func (m member) describe() string {
	if m.key != m.name {
		return m.name + " (claim " + m.key + "; " + m.failed + ")"
	}
	return m.name + " (" + m.failed + ")"
}

// note is an event to send.
func note(typ, reason, format string, args ...any) resource.Note {
	return resource.Note{Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// pausedCondition is the class's RolloutPaused condition for st.
func pausedCondition(st *common.RolloutStatus) (metav1.ConditionStatus, string, string) {
	switch {
	case st.Paused != "":
		return metav1.ConditionTrue, st.Paused, st.Message
	case st.CompletedAt != nil:
		return metav1.ConditionFalse, common.ReasonRolloutComplete, fmt.Sprintf("revision %s runs on all %d resources that follow new revisions", st.Revision, st.Total)
	}
	return metav1.ConditionFalse, common.ReasonRolloutProgressing, fmt.Sprintf("revision %s runs on %d of %d resources (wave %d)", st.Revision, st.Updated, st.Total, st.Wave)
}
