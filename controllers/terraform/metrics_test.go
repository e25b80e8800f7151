package terraform

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
)

// TestStateGauges: every kind gets its own series (two kinds share the name Database),
// counting resources by condition.
func TestStateGauges(t *testing.T) {
	held := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	held.Status.Conditions = []metav1.Condition{
		{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: common.ReasonAvailable},
		{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: common.ReasonAwaitingApproval}}
	fine := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}}
	fine.Status.Conditions = []metav1.Condition{
		{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: common.ReasonAvailable},
		{Type: common.TypeSynced, Status: metav1.ConditionTrue, Reason: "ReconcileSuccess"}}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(held, fine).Build()
	reg := prometheus.NewRegistry()
	if err := reg.Register(&stateCollector{reader: c, kinds: kinds.NewRegistry(nil).TerraformKinds()}); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.Metric {
			labels := []string{}
			for _, l := range m.Label {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			got[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	for series, want := range map[string]float64{
		"terraplane_managed_ready{group=terraform.terraplane.io,kind=Module}":             2,
		"terraplane_managed_synced{group=terraform.terraplane.io,kind=Module}":            1,
		"terraplane_managed_awaiting_approval{group=terraform.terraplane.io,kind=Module}": 1,
		"terraplane_managed_ready{group=database.postgresql.terraplane.io,kind=Database}": 0,
		"terraplane_managed_ready{group=database.mysql.terraplane.io,kind=Database}":      0,
	} {
		if v, ok := got[series]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", series, v, ok, want)
		}
	}
}
