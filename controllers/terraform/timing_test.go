package terraform

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestDriftIntervalPerResource: an unchanged resource is planned again after its own
// spec.driftInterval, or the controller's when it sets none; a success, or a held plan,
// is looked at again after the same interval.
func TestDriftIntervalPerResource(t *testing.T) {
	r := &connector{opts: Options{DriftInterval: time.Hour}}
	for name, tc := range map[string]struct {
		own     time.Duration // 0: unset
		planned time.Duration // ago
		due     bool
		retry   time.Duration // the success retry, before jitter
	}{
		"default, planned 20m ago":      {0, 20 * time.Minute, false, time.Hour},
		"default, planned 2h ago":       {0, 2 * time.Hour, true, time.Hour},
		"10m of its own, 20m ago":       {10 * time.Minute, 20 * time.Minute, true, 10 * time.Minute},
		"10m of its own, 5m ago":        {10 * time.Minute, 5 * time.Minute, false, 10 * time.Minute},
		"6h of its own, planned 2h ago": {6 * time.Hour, 2 * time.Hour, false, 6 * time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
			if tc.own > 0 {
				m.Spec.DriftInterval = &metav1.Duration{Duration: tc.own}
			}
			planned := metav1.NewTime(time.Now().Add(-tc.planned))
			m.Status.Terraform.LastPlanTime, m.Status.Terraform.InputsHash = &planned, "h"
			resource.SetCondition(&m.Status.Conditions, 1, common.TypeSynced, metav1.ConditionTrue, common.ReasonReconcileSuccess, "")
			resource.SetCondition(&m.Status.Conditions, 1, common.TypeReady, metav1.ConditionTrue, common.ReasonAvailable, "")
			sit := situate(m, facts{hash: "h", driftInterval: r.driftInterval(m), now: time.Now()})
			due, wait := sit.due != dueNot, sit.wait
			if due != tc.due {
				t.Fatalf("due = %v, want %v", due, tc.due)
			}
			if !due {
				if want := tc.retry - tc.planned; wait < want || wait > want+tc.retry/10+time.Second {
					t.Errorf("next look in %s, want %s and at most a tenth more", wait, want)
				}
			}
			if s := r.retries(m).Success; s < tc.retry || s > tc.retry+tc.retry/10 {
				t.Errorf("success retried after %s, want %s and at most a tenth more", s, tc.retry)
			}
		})
	}
}

// TestDriftIntervalDefault: a controller given no drift interval, or a negative one,
// plans unchanged resources every DefaultDriftInterval; any other is kept.
func TestDriftIntervalDefault(t *testing.T) {
	for given, want := range map[time.Duration]time.Duration{0: DefaultDriftInterval, -time.Second: DefaultDriftInterval, time.Hour: time.Hour} {
		if got := DriftInterval(given); got != want {
			t.Errorf("DriftInterval(%s) = %s, want %s", given, got, want)
		}
	}
}
