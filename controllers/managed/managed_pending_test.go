package managed

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/workspace"
)

// TestStateAddresses: the instances of a partial state, named as recovery imports name
// them (inside the module), so that only what is not in state is imported.
func TestStateAddresses(t *testing.T) {
	r := &terraform{runner: &fakeRunner{state: `{"version": 4, "resources": [
		{"module": "module.this", "mode": "managed", "type": "aws_iam_role", "name": "this",
		 "instances": [{"index_key": "cluster"}, {"index_key": "node"}]},
		{"module": "module.this", "mode": "managed", "type": "aws_subnet", "name": "this", "instances": [{"index_key": 0}]},
		{"module": "module.this", "mode": "data", "type": "aws_region", "name": "current", "instances": [{}]},
		{"mode": "managed", "type": "terraform_data", "name": "root", "instances": [{}]}]}`}}
	got, err := r.stateAddresses(context.Background(), &workspace.Rendered{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`aws_iam_role.this["cluster"]`, `aws_iam_role.this["node"]`, "aws_subnet.this[0]", "data.aws_region.current", "terraform_data.root"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("addresses (-want +got):\n%s", d)
	}
	if got, err := (&terraform{runner: &fakeRunner{}}).stateAddresses(context.Background(), &workspace.Rendered{}); err != nil || got != nil {
		t.Errorf("no state: %v, %v", got, err)
	}
}

// TestMissingImports reads which imports found nothing from terraform's diagnostics.
func TestMissingImports(t *testing.T) {
	err := errors.New(`terraform apply: Error: Cannot import non-existent remote object

While attempting to import an existing object to "module.this.aws_iam_role.this[\"node\"]", the provider detected that no object exists with the given id.

Error: Cannot import non-existent remote object

While attempting to import an existing object to "module.this.aws_eks_cluster.this", the provider detected that no object exists with the given id.`)
	if d := cmp.Diff([]string{`aws_iam_role.this["node"]`, "aws_eks_cluster.this"}, missingImports(err)); d != "" {
		t.Errorf("missing imports (-want +got):\n%s", d)
	}
	if missingImports(errors.New("Error: something else")) != nil || missingImports(nil) != nil {
		t.Error("other errors name no missing import")
	}
}

// TestForSecretRetriesWhatFails: a changed Secret someone wrote (a Provider's credentials,
// say) retries the failing resources of its namespace at once, not the healthy ones nor
// those holding a plan; a Secret Terraplane wrote retries nothing.
func TestForSecretRetriesWhatFails(t *testing.T) {
	synced := func(status metav1.ConditionStatus, reason string) func(*terraformv1.Module) {
		return func(m *terraformv1.Module) {
			m.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: status, Reason: reason}}
		}
	}
	h := newHarness(t, synced(metav1.ConditionFalse, resource.ReasonReconcileError))
	for name, edit := range map[string]func(*terraformv1.Module){
		"fine": synced(metav1.ConditionTrue, resource.ReasonSucceeded), "held": synced(metav1.ConditionFalse, common.ReasonAwaitingApproval),
	} {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "platform"}}
		edit(m)
		if err := h.c.Create(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "aws-creds", Namespace: "platform"}}
	if got := h.tf.forSecret(context.Background(), creds); len(got) != 1 || got[0].Name != "net" {
		t.Errorf("a credentials Secret retries %v, want the failing Module only", got)
	}
	conn := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "conn", Namespace: "platform", Labels: map[string]string{resource.ManagedLabel: "u-2"}}}
	if got := h.tf.forSecret(context.Background(), conn); len(got) != 0 {
		t.Errorf("a connection Secret retries %v, want nothing", got)
	}
}
