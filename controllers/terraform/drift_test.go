package terraform

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	"terraplane.io/terraplane/controllers/managed"
	"terraplane.io/terraplane/internal/engine"
)

// TestDriftIsAChangeOfInfrastructure: a drift check reports drift (the Drifted condition
// and the DriftDetected event) only when its plan changes a resource; a provider upgrade
// or outputs alone are not drift.
func TestDriftIsAChangeOfInfrastructure(t *testing.T) {
	outputsOnly := &engine.Plan{ID: "aaaa000000000010", OutputsChange: true}
	upgradeOutputs := &engine.Plan{ID: "aaaa000000000011", ProviderChanges: moved, OutputsChange: true}
	for _, tc := range []struct {
		name  string
		plan  *engine.Plan
		drift managed.Drift
	}{
		{"a changed resource is drift", update, managed.DriftFound},
		{"a provider upgrade without resource changes is not", upgrade, managed.DriftUnknown},
		{"nor with outputs that change", upgradeOutputs, managed.DriftUnknown},
		{"nor outputs alone", outputsOnly, managed.DriftUnknown},
		{"objects deleted outside terraform are", gone, managed.DriftFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.runner.plans = []*engine.Plan{tc.plan}
			e := h.scope(applied)
			e.sit.reason = common.PlanDrift
			if _, err := e.makePlan(context.Background()); err != nil {
				t.Fatalf("plan: %v", err)
			}
			if diff := cmp.Diff(tc.drift, e.record().Drift); diff != "" {
				t.Errorf("drift (-want +got):\n%s", diff)
			}
			announced := strings.Contains(strings.Join(drain(h), "\n"), common.ReasonDriftDetected)
			if diff := cmp.Diff(tc.drift == managed.DriftFound, announced); diff != "" {
				t.Errorf("DriftDetected event (-want +got):\n%s", diff)
			}
		})
	}
}

// drain is the events recorded so far.
func drain(h *harness) []string {
	var out []string
	for {
		select {
		case ev := <-h.events.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}
