package classrevision

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

// TestTallyOnly: which report changes wait for their time. Counts alone do; a new
// revision, a rollout's wave, pause or completion, and a condition's new reason do not.
func TestTallyOnly(t *testing.T) {
	base := func() *terraformv1.ModuleClass {
		c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "gold", Generation: 1}}
		rc := &c.Status.ClassRevisions
		rc.LatestRevision = "gold-2"
		rc.Revisions = []common.RevisionCount{{Name: "gold-2", Revision: 2, Resources: 3, Ready: 2, Pending: 1}, {Name: "gold-1", Revision: 1, Resources: 4, Ready: 4}}
		rc.Providers = []common.ProviderVersionCount{{Provider: "hashicorp/random", Version: "3.9.0", Resources: 7}}
		rc.Rollout = &common.RolloutStatus{Revision: "gold-2", Wave: 1, Admitted: []string{"a"}, Updated: 3, Total: 8}
		resource.SetCondition(&c.Status.Conditions, 1, common.TypeRolloutPaused, metav1.ConditionFalse, common.ReasonRolloutProgressing, "revision gold-2 runs on 3 of 8 resources (wave 1)")
		c.Status.Conditions[0].LastTransitionTime = metav1.Unix(1000, 0)
		return c
	}
	for name, tc := range map[string]struct {
		edit func(c *terraformv1.ModuleClass)
		want bool
	}{
		"nothing": {func(*terraformv1.ModuleClass) {}, true},
		"counts": {func(c *terraformv1.ModuleClass) {
			rc := &c.Status.ClassRevisions
			rc.Revisions[0].Resources, rc.Revisions[0].Ready, rc.Revisions[1].Resources = 4, 4, 3
			rc.Providers[0].Resources = 8
			rc.Rollout.Updated, rc.Rollout.Total = 4, 9
			c.Status.Conditions[0].Message = "revision gold-2 runs on 4 of 9 resources (wave 1)"
		}, true},
		"a new revision": {func(c *terraformv1.ModuleClass) {
			c.Status.LatestRevision = "gold-3"
			c.Status.Revisions = append([]common.RevisionCount{{Name: "gold-3", Revision: 3}}, c.Status.Revisions...)
		}, false},
		"a new provider version": {func(c *terraformv1.ModuleClass) {
			c.Status.Providers = append(c.Status.Providers, common.ProviderVersionCount{Provider: "hashicorp/random", Version: "3.9.1", Resources: 1})
		}, false},
		"a wave": {func(c *terraformv1.ModuleClass) {
			c.Status.Rollout.Wave, c.Status.Rollout.Admitted = 2, []string{"a", "b"}
		}, false},
		"paused": {func(c *terraformv1.ModuleClass) {
			c.Status.Rollout.Paused = common.ReasonRolloutFailed
			c.Status.Conditions[0].Status, c.Status.Conditions[0].Reason = metav1.ConditionTrue, common.ReasonRolloutFailed
		}, false},
		"complete": {func(c *terraformv1.ModuleClass) {
			c.Status.Rollout.CompletedAt = &metav1.Time{}
			c.Status.Conditions[0].Reason, c.Status.Conditions[0].Message = common.ReasonRolloutComplete, "revision gold-2 runs on all 8 resources"
		}, false},
	} {
		t.Run(name, func(t *testing.T) {
			before, after := base(), base()
			tc.edit(after)
			if got := tallyOnly(before, after); got != tc.want {
				t.Errorf("tallyOnly = %v; want %v", got, tc.want)
			}
		})
	}
	if tallyOnly(&terraformv1.Module{}, &terraformv1.Module{}) {
		t.Error("tallyOnly of two objects that are no classes = true; want false")
	}
}

// TestReportPace: a report of counts alone waits until tallyEvery has passed since the
// class last wrote one; any other report, and a class's first, goes at once.
func TestReportPace(t *testing.T) {
	now := time.Unix(1000, 0)
	p := &reportPace{now: func() time.Time { return now }}
	req := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "admin", Name: "gold"}}
	other := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "admin", Name: "silver"}}
	if w := p.wait(req, true, tallyEvery); w != 0 {
		t.Fatalf("first report waits %v; want 0", w)
	}
	p.wrote(req)
	now = now.Add(3 * time.Second)
	for name, tc := range map[string]struct {
		req   reconcile.Request
		tally bool
		every time.Duration
		want  time.Duration
	}{
		"counts, 3 s after the last write":                  {req, true, tallyEvery, tallyEvery - 3*time.Second},
		"counts of a large fleet, 3 s after the last write": {req, true, maxTally, maxTally - 3*time.Second},
		"news, 3 s after the last write":                    {req, false, maxTally, 0},
		"counts of a class that wrote none":                 {other, true, tallyEvery, 0},
	} {
		if got := p.wait(tc.req, tc.tally, tc.every); got != tc.want {
			t.Errorf("%s: wait = %v; want %v", name, got, tc.want)
		}
	}
	now = now.Add(tallyEvery)
	if w := p.wait(req, true, tallyEvery); w != 0 {
		t.Errorf("counts after tallyEvery wait %v; want 0", w)
	}
}
