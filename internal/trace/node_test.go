package trace

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// managed is an S3Bucket whose status is the YAML given.
func managed(t *testing.T, status string) *unstructured.Unstructured {
	t.Helper()
	return objects(t, "apiVersion: storage.aws.terraplane.io/v1alpha1\nkind: S3Bucket\nmetadata: {name: b, namespace: terraplane-system, uid: b0b0b0b0-0000-4000-8000-000000000002}\nstatus:\n"+status)[0].(*unstructured.Unstructured)
}

const (
	planUpdate   = "  terraform:\n    plan: {id: aaaa000000000002, reason: Update, add: 1, change: 2, destroy: 3, replace: 4, createdAt: \"2026-01-01T00:00:00Z\"}\n    lastApply: {id: aaaa000000000001, add: 0, change: 0, destroy: 0, replace: 0, time: \"2026-01-01T00:00:00Z\"}\n"
	planApplied  = "  terraform:\n    plan: {id: aaaa000000000001, reason: Create, add: 1, change: 0, destroy: 0, replace: 0, createdAt: \"2026-01-01T00:00:00Z\"}\n    lastApply: {id: aaaa000000000001, add: 1, change: 0, destroy: 0, replace: 0, time: \"2026-01-01T00:00:00Z\"}\n"
	syncedFalse  = "  - {type: Synced, status: \"False\", reason: %s, message: m, lastTransitionTime: \"2026-01-01T00:00:00Z\"}\n"
	conditionsAt = "  conditions:\n"
)

// TestPlanNode: which plans a trace shows, and whether they are pending and awaiting
// approval, as `terraplane approve` decides.
func TestPlanNode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status string
		want   *Node // nil: no plan node
	}{
		{"no plan", "  conditions: []\n", nil},
		{"the plan was applied", planApplied, nil},
		{"awaiting approval", planUpdate + conditionsAt + sprintf(syncedFalse, "AwaitingApproval"),
			&Node{Reason: "AwaitingApproval", Plan: &Plan{ID: "aaaa000000000002", Reason: "Update", Add: 1, Change: 2, Destroy: 3, Replace: 4, Pending: true, AwaitingApproval: true}}},
		{"a refused destructive change is approved the same way", planUpdate + conditionsAt + sprintf(syncedFalse, "DestructiveChangeRefused"),
			&Node{Reason: "DestructiveChangeRefused", Plan: &Plan{ID: "aaaa000000000002", Reason: "Update", Add: 1, Change: 2, Destroy: 3, Replace: 4, Pending: true, AwaitingApproval: true}}},
		{"a create the managementPolicies forbid is held, but no approval helps", planUpdate + conditionsAt + sprintf(syncedFalse, "CreateNotAllowed"),
			&Node{Reason: "CreateNotAllowed", Plan: &Plan{ID: "aaaa000000000002", Reason: "Update", Add: 1, Change: 2, Destroy: 3, Replace: 4, Pending: true}}},
		{"drift an observe-only resource leaves alone", planUpdate + conditionsAt + "  - {type: Drifted, status: \"True\", reason: DriftDetected, message: m, lastTransitionTime: \"2026-01-01T00:00:00Z\"}\n",
			&Node{Reason: "DriftNotCorrected", Plan: &Plan{ID: "aaaa000000000002", Reason: "Update", Add: 1, Change: 2, Destroy: 3, Replace: 4, Pending: true}}},
		{"a plan about to be applied is not held", planUpdate + conditionsAt + sprintf(syncedFalse, "ReconcileError"),
			&Node{Reason: "Planned", Plan: &Plan{ID: "aaaa000000000002", Reason: "Update", Add: 1, Change: 2, Destroy: 3, Replace: 4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := planNode(managed(t, tc.status))
			if tc.want == nil || got == nil {
				if tc.want != got {
					t.Fatalf("plan node %+v, want %+v", got, tc.want)
				}
				return
			}
			if diff := cmp.Diff(tc.want, &Node{Reason: got.Reason, Plan: got.Plan}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.APIVersion != "terraform.terraplane.io/v1alpha1" || got.Kind != "Plan" || got.Name != "tfplan-b0b0b0b0000040008000000000000002" ||
				got.Derived || got.Display != "Plan/aaaa000000000002" || got.Created == nil {
				t.Errorf("the node is the Plan object kubectl get finds, named by its plan id in tables, with its age: %+v", got)
			}
		})
	}
}

// TestObjectNodeReason: the STATUS column tells what is wrong first.
func TestObjectNodeReason(t *testing.T) {
	cond := func(typ, status, reason string) string {
		return "  - {type: " + typ + ", status: \"" + status + "\", reason: " + reason + ", message: " + reason + "-msg, lastTransitionTime: \"2026-01-01T00:00:00Z\"}\n"
	}
	for _, tc := range []struct {
		name, status, reason string
	}{
		{"Synced=False wins over Ready=True", conditionsAt + cond("Ready", "True", "Available") + cond("Synced", "False", "ReconcileError"), "ReconcileError"},
		{"Ready=False when Synced is fine", conditionsAt + cond("Ready", "False", "Creating") + cond("Synced", "True", "ReconcileSuccess"), "Creating"},
		{"Stalled=True over a Ready=True", conditionsAt + cond("Ready", "True", "Available") + cond("Stalled", "True", "BadInput"), "BadInput"},
		{"all well: Ready's reason", conditionsAt + cond("Ready", "True", "Available") + cond("Synced", "True", "ReconcileSuccess"), "Available"},
		{"only Synced", conditionsAt + cond("Synced", "True", "ReconcileSuccess"), "ReconcileSuccess"},
		{"terraform running long, over Ready=False", conditionsAt + cond("Ready", "False", "Creating") + cond("Reconciling", "True", "TerraformRunning"), "TerraformRunning"},
		{"terraform running long, over Ready=True", conditionsAt + cond("Ready", "True", "Available") + cond("Reconciling", "True", "TerraformRunning"), "TerraformRunning"},
		{"only applying: Ready's reason", conditionsAt + cond("Ready", "True", "Available") + cond("Reconciling", "True", "Applying"), "Available"},
		{"no conditions: the binding phase", "  bindingPhase: Released\n", "Released"},
		{"no conditions: the state", "  state: Pending\n", "Pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := objectNode(managed(t, tc.status))
			if n.Reason != tc.reason || n.Reason != "Released" && n.Reason != "Pending" && n.Message != tc.reason+"-msg" {
				t.Errorf("reason %q message %q, want %q", n.Reason, n.Message, tc.reason)
			}
		})
	}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
