package planstore

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
)

// Summary is the status form of a plan.
func Summary(id string, reason common.PlanReason, changes []engine.Change, hash string, at metav1.Time) *common.PlanSummary {
	c := engine.CountChanges(changes)
	s := &common.PlanSummary{ID: id, Reason: reason, Add: c.Add, Change: c.Change, Destroy: c.Destroy, Replace: c.Replace,
		Import: c.Import, CreatedAt: at, InputsHash: hash}
	for i, ch := range changes {
		if i == common.MaxPlannedChanges {
			s.ChangesOmitted = len(changes) - i
			break
		}
		s.Changes = append(s.Changes, common.PlannedChange{Address: ch.Address, Actions: ch.Actions})
	}
	return s
}

// ProviderSummary is the status form of a plan's provider changes.
func ProviderSummary(changes []engine.ProviderChange) []common.ProviderVersionChange {
	var out []common.ProviderVersionChange
	for _, c := range changes {
		out = append(out, common.ProviderVersionChange{Provider: c.Provider, From: c.From, To: c.To})
	}
	return out
}
