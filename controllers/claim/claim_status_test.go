package claim

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
)

func TestFirstStatusWait(t *testing.T) {
	module := func(age time.Duration, phase common.BindingPhase, conds int) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Now().Add(-age))}}
		m.Status.BindingPhase = phase
		for range conds {
			m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: common.TypeReady})
		}
		return m
	}
	if w := firstStatusWait(module(0, "", 0)); w <= statusCoalesce-time.Second || w > statusCoalesce {
		t.Errorf("a new, unreported resource: wait %v, want about %v", w, statusCoalesce)
	}
	for name, m := range map[string]*terraformv1.Module{
		"old and unreported": module(time.Minute, "", 0),
		"reported phase":     module(0, common.BindingPhaseBound, 0),
		"reported condition": module(0, "", 1),
	} {
		if w := firstStatusWait(m); w != 0 {
			t.Errorf("%s: wait %v, want 0", name, w)
		}
	}
}
