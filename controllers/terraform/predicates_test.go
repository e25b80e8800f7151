package terraform

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

func TestUserAnnotationChangedIgnoresTheCreatePendingRecord(t *testing.T) {
	with := func(ann map[string]string) *terraformv1.Module {
		return &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}
	}
	cases := []struct {
		name          string
		before, after map[string]string
		want          bool
	}{
		{"create pending recorded", nil, map[string]string{common.CreatePendingAnnotation: "t"}, false},
		{"create pending cleared", map[string]string{common.CreatePendingAnnotation: "t", "a": "1"}, map[string]string{"a": "1"}, false},
		{"create again asked", nil, map[string]string{common.CreateAgainAnnotation: "true"}, true},
		{"user annotation changed", map[string]string{"a": "1"}, map[string]string{"a": "2"}, true},
	}
	for _, c := range cases {
		got := userAnnotationChanged.Update(event.UpdateEvent{ObjectOld: with(c.before), ObjectNew: with(c.after)})
		if got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRequestedAtAsksForAPlanOnce(t *testing.T) {
	r := &connector{opts: Options{DriftInterval: time.Hour}}
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	now := metav1.Now()
	m.Status.Terraform.LastPlanTime, m.Status.Terraform.InputsHash = &now, "h"
	resource.SetCondition(&m.Status.Conditions, 1, common.TypeSynced, metav1.ConditionTrue, "ReconcileSuccess", "")
	resource.SetCondition(&m.Status.Conditions, 1, common.TypeReady, metav1.ConditionTrue, common.ReasonAvailable, "")
	if due, _ := r.due(m, "h"); due {
		t.Fatal("a resource planned just now is due")
	}
	m.Annotations = map[string]string{common.RequestedAtAnnotation: "2026-11-26T03:00:00Z"}
	if due, _ := r.due(m, "h"); !due {
		t.Fatal("a new requested-at does not ask for a plan")
	}
	m.Status.Terraform.LastHandledRequest = "2026-11-26T03:00:00Z"
	if due, _ := r.due(m, "h"); due {
		t.Fatal("a requested-at already answered asks again")
	}
}
