package terraform

import (
	"context"
	"strings"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
)

// TestPlanTooLarge: a plan over what the chunk Secrets hold is a PlanTooLarge user error,
// retried at the user-error interval, that keeps nothing; approving its id applies the
// next plan with that id at once.
func TestPlanTooLarge(t *testing.T) {
	h := newHarness(t, func(m *terraformv1.Module) { m.Spec.Approval = common.ApprovalManual })
	h.tf.plans.ChunkBytes, h.tf.plans.MaxChunks = 4, 2
	big := &engine.Plan{ID: "aaaa000000000030", Changes: create.Changes, File: []byte("123456789"), Text: "big", Resources: 1}
	h.runner.plans = []*engine.Plan{big}
	res, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "platform", Name: "net"}})
	if err != nil {
		t.Fatal(err)
	}
	mg := h.get()
	s := synced(mg)
	if s.Reason != common.ReasonPlanTooLarge || !strings.Contains(s.Message, big.ID) || !strings.Contains(s.Message, "2 Secrets") {
		t.Fatalf("Synced = %+v", s)
	}
	if res.RequeueAfter != h.tf.opts.UserErrorRetry {
		t.Errorf("requeued after %v, want the user-error retry %v", res.RequeueAfter, h.tf.opts.UserErrorRetry)
	}
	if h.planSecret() != nil || h.calls() != "plan" || !hasEvent(h.drain(), "Warning PlanTooLarge") {
		t.Errorf("kept %v", h.planSecret())
	}

	h.edit(func(m *terraformv1.Module) { m.Spec.ApprovedPlan = big.ID })
	h.runner.plans = []*engine.Plan{big}
	mg = h.reconcile()
	if got := h.calls(); got != "plan apply" || mg.Status.Terraform.LastApply == nil || mg.Status.Terraform.LastApply.ID != big.ID {
		t.Errorf("approval ran %q, lastApply %+v", got, mg.Status.Terraform.LastApply)
	}
}
