package classrevision

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
)

// TestFleetMoved: which updates of a resource queue its class. Those that change what
// the class reports or rolls out on do; a drift check's or a plan's status write does not.
func TestFleetMoved(t *testing.T) {
	base := func() *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "m", Generation: 1}}
		m.Spec.ClassRef = &common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "gold", Namespace: "admin"}
		m.Spec.Revision, m.Status.Revision = "gold-1", "gold-1"
		resource.SetCondition(&m.Status.Conditions, 1, common.TypeReady, metav1.ConditionTrue, "Available", "")
		resource.SetCondition(&m.Status.Conditions, 1, common.TypeSynced, metav1.ConditionTrue, "ReconcileSuccess", "")
		return m
	}
	for name, tc := range map[string]struct {
		edit func(m *terraformv1.Module)
		want bool
	}{
		"nothing":         {func(*terraformv1.Module) {}, false},
		"a drift check":   {func(m *terraformv1.Module) { m.Status.Terraform.LastPlanTime = &metav1.Time{} }, false},
		"told to move":    {func(m *terraformv1.Module) { m.Spec.Revision = "gold-2" }, true},
		"moved":           {func(m *terraformv1.Module) { m.Status.Revision = "gold-2" }, true},
		"no longer Ready": {func(m *terraformv1.Module) { m.Status.Conditions[0].Status = metav1.ConditionFalse }, true},
		"failed": {func(m *terraformv1.Module) {
			m.Status.Conditions[1].Status, m.Status.Conditions[1].Reason = metav1.ConditionFalse, "ApplyFailed"
		}, true},
		"stays on its revision":   {func(m *terraformv1.Module) { m.Spec.RevisionPolicy = common.RevisionManual }, true},
		"made from another class": {func(m *terraformv1.Module) { m.Spec.ClassRef.Name = "silver" }, true},
	} {
		t.Run(name, func(t *testing.T) {
			before, after := base(), base()
			tc.edit(after)
			if got := fleetMoved(before, after); got != tc.want {
				t.Errorf("fleetMoved = %v; want %v", got, tc.want)
			}
		})
	}
}

// TestClassesNaming: a ProviderConfig maps to the classes of its namespace that name it.
func TestClassesNaming(t *testing.T) {
	kind, _ := kinds.NewRegistry(nil).ManagedForClass(terraformv1.GroupVersion.WithKind("ModuleClass"))
	class := func(ns, name string, refs ...string) *terraformv1.ModuleClass {
		c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		for _, r := range refs {
			c.SpecTemplate.ProviderConfigRefs = append(c.SpecTemplate.ProviderConfigRefs, common.LocalReference{Name: r})
		}
		return c
	}
	pc := &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "random"}}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(pc,
		class("admin", "pets", "other", "random"), class("admin", "cats", "other"), class("elsewhere", "dogs", "random")).Build()
	r := &Reconciler{client: c, kind: kind}
	want := []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: "admin", Name: "pets"}}}
	if diff := cmp.Diff(want, r.classesNaming(context.Background(), pc)); diff != "" {
		t.Errorf("classes naming the ProviderConfig (-want +got):\n%s", diff)
	}
}

// TestOnlyReportMoved: an update of a class whose only change is the report this
// controller writes waits for the coalescing window; any other change (its spec, the
// module its own controller read, its conditions) is looked at at once.
func TestOnlyReportMoved(t *testing.T) {
	base := func() *terraformv1.ModuleClass {
		c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "gold", Generation: 1, ResourceVersion: "7"}}
		c.Status.LatestRevision = "gold-1"
		c.Status.Revisions = []common.RevisionCount{{Name: "gold-1", Resources: 3}}
		return c
	}
	for name, tc := range map[string]struct {
		edit func(c *terraformv1.ModuleClass)
		want bool
	}{
		"resources counted again": {func(c *terraformv1.ModuleClass) {
			c.ResourceVersion = "8"
			c.Status.Revisions[0].Resources = 4
		}, true},
		"a new revision reported": {func(c *terraformv1.ModuleClass) { c.Status.LatestRevision = "gold-2" }, true},
		"its spec":                {func(c *terraformv1.ModuleClass) { c.Generation, c.SpecTemplate.Approval = 2, common.ApprovalManual }, false},
		"the module read again":   {func(c *terraformv1.ModuleClass) { c.Status.ProviderLock = "lock" }, false},
		"its conditions": {func(c *terraformv1.ModuleClass) {
			resource.SetCondition(&c.Status.Conditions, 1, common.TypeReady, metav1.ConditionTrue, "ModuleValid", "")
		}, false},
	} {
		t.Run(name, func(t *testing.T) {
			after := base()
			tc.edit(after)
			if got := onlyReportMoved(base(), after); got != tc.want {
				t.Errorf("onlyReportMoved = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCoalescingWindow: a class looks at its fleet once a second up to two thousand
// resources, then once per second times the square of its thousands, at most every
// maxCoalesce; a class not counted yet waits the shortest window.
func TestCoalescingWindow(t *testing.T) {
	var s fleetSizes
	gold, silver := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "a", Name: "gold"}}, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "a", Name: "silver"}}
	if got := s.window(gold); got != coalesce {
		t.Errorf("not counted yet: %v, want %v", got, coalesce)
	}
	for size, want := range map[int]time.Duration{0: time.Second, 999: time.Second, 1000: time.Second, 1999: time.Second, 2000: 4 * time.Second, 3500: 9 * time.Second, 5000: 25 * time.Second, 10_000: 30 * time.Second, 80_000: 30 * time.Second, 1 << 40: 30 * time.Second} {
		s.record(gold, size)
		if got := s.window(gold); got != want {
			t.Errorf("%d resources: %v, want %v", size, got, want)
		}
	}
	if got := s.window(silver); got != coalesce {
		t.Errorf("another class: %v, want %v", got, coalesce)
	}
}

// TestTallyPace: a class writes counts alone at most every twenty seconds up to two
// thousand resources, then every twenty seconds per thousand, at most every two minutes;
// a class not counted yet has the shortest pace.
func TestTallyPace(t *testing.T) {
	var s fleetSizes
	gold, silver := reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "a", Name: "gold"}}, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "a", Name: "silver"}}
	if got := s.tally(gold); got != tallyEvery {
		t.Errorf("not counted yet: %v, want %v", got, tallyEvery)
	}
	for size, want := range map[int]time.Duration{0: 20 * time.Second, 1000: 20 * time.Second, 1999: 20 * time.Second, 3000: time.Minute, 6000: 2 * time.Minute, 10_000: 2 * time.Minute} {
		s.record(gold, size)
		if got := s.tally(gold); got != want {
			t.Errorf("%d resources: %v, want %v", size, got, want)
		}
	}
	if got := s.tally(silver); got != tallyEvery {
		t.Errorf("another class: %v, want %v", got, tallyEvery)
	}
}
