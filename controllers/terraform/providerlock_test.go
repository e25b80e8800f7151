package terraform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
)

// TestProviderUpgradeHeldThenApproved: a create records the lock it ran with; a plan that
// moves providers outside the lock (its constraint changed, no class revision brings them)
// is held (ProviderUpgrade), its versions in status, the lock kept;
// its approval applies the saved plan with the newer lock, which is the resource's from
// then on.
func TestProviderUpgradeHeldThenApproved(t *testing.T) {
	h := newHarness(t, nil)
	h.runner.lock = []byte("lock 3.9.0")
	mg := h.reconcile()
	if got := h.calls(); got != "create" || mg.Status.Terraform.ProviderLock != "lock 3.9.0" {
		t.Fatalf("create ran %q and recorded lock %q, want the create's", got, mg.Status.Terraform.ProviderLock)
	}

	up := &engine.Plan{ID: "up-1", ProviderChanges: moved, Lock: []byte("lock 3.10.0"), File: []byte("saved-upgrade"), Resources: 1}
	h.runner.plans = []*engine.Plan{up}
	h.edit(func(m *terraformv1.Module) {
		m.Annotations = map[string]string{common.RequestedAtAnnotation: "1"}
	})
	mg = h.reconcile()
	if got := h.calls(); got != "plan" || len(h.runner.opts) != 1 || h.runner.opts[0].LookForUpgrades {
		t.Fatalf("a drift check ran %q with %+v, want a plan that looks for no upgrade (the Module has no class)", got, h.runner.opts)
	}
	s := synced(mg)
	if s.Reason != common.ReasonProviderUpgrade || !strings.Contains(s.Message, "hashicorp/random 3.9.0 -> 3.10.0") {
		t.Fatalf("Synced = %+v", s)
	}
	want := []common.ProviderVersionChange{{Provider: "registry.terraform.io/hashicorp/random", From: "3.9.0", To: "3.10.0"}}
	if diff := cmp.Diff(want, mg.Status.Terraform.Plan.Providers); diff != "" || mg.Status.Terraform.ProviderLock != "lock 3.9.0" {
		t.Errorf("held: lock %q; providers (-want +got):\n%s", mg.Status.Terraform.ProviderLock, diff)
	}
	if evs := h.drain(); !hasEvent(evs, "Normal ProviderUpgrade") {
		t.Errorf("events = %v, want a ProviderUpgrade event", evs)
	}
	if h.reconcile(); h.calls() != "" {
		t.Fatal("a held upgrade was planned again with nothing changed")
	}

	h.edit(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = up.ID })
	mg = h.reconcile()
	if got := h.calls(); got != "apply" || len(h.runner.applied) != 1 || string(h.runner.applied[0].Lock) != "lock 3.10.0" {
		t.Fatalf("approval ran %q and applied %v, want the saved plan with its lock", got, h.runner.applied)
	}
	if s := synced(mg); s.Status != metav1.ConditionTrue || mg.Status.Terraform.ProviderLock != "lock 3.10.0" {
		t.Errorf("after approval: Synced %+v, lock %q; want the upgrade's lock", s, mg.Status.Terraform.ProviderLock)
	}
}
