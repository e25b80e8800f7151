package terraform

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
)

// TestWatchKeys: a Module is indexed by the objects it reads and, while it fails for a
// reason a fixed Secret or Provider may clear, as failing.
func TestWatchKeys(t *testing.T) {
	kind, _ := kinds.NewRegistry(nil).Managed(terraformv1.GroupVersion.WithKind("Module"))
	failing := func(reason string) func(*terraformv1.Module) {
		return func(m *terraformv1.Module) {
			m.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: metav1.ConditionFalse, Reason: reason}}
		}
	}
	for name, tc := range map[string]struct {
		edit func(*terraformv1.Module)
		want []string
	}{
		"reads nothing, healthy": {func(*terraformv1.Module) {}, nil},
		"provider and variables": {func(m *terraformv1.Module) {
			m.Spec.ProviderRef = &common.LocalReference{Name: "aws"}
			m.Spec.ProviderConfigRefs = []common.LocalReference{{Name: "aws"}, {Name: "random"}}
			m.Spec.VariablesFrom = []terraformv1.VariableFrom{
				{ValueFrom: terraformv1.VariableSource{SecretKeyRef: &terraformv1.SecretKeySelector{Name: "db", Key: "k"}}},
				{ValueFrom: terraformv1.VariableSource{ConfigMapKeyRef: &terraformv1.ConfigMapKeySelector{Name: "sizes", Key: "k"}}},
			}
		}, []string{"ConfigMap/sizes", "ProviderConfig/aws", "ProviderConfig/random", "Secret/db"}},
		"failing":             {failing(common.ReasonReconcileError), []string{keyFailing}},
		"failing on a Secret": {failing("SecretNotFound"), []string{keyFailing, keyFailingOnSecret}},
		"holding a plan":      {failing(common.ReasonAwaitingApproval), nil},
		"create interrupted":  {failing(common.ReasonCreateInterrupted), nil},
		"ready": {func(m *terraformv1.Module) {
			m.Status.Conditions = []metav1.Condition{{Type: common.TypeSynced, Status: metav1.ConditionTrue, Reason: common.ReasonReconcileSuccess}}
		}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			m := &terraformv1.Module{}
			tc.edit(m)
			if diff := cmp.Diff(tc.want, watchKeys(kind)(m)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

// TestForVariableObject: a ConfigMap reaches the Modules of its namespace that read it,
// each once, and no other.
func TestForVariableObject(t *testing.T) {
	kind, _ := kinds.NewRegistry(nil).Managed(terraformv1.GroupVersion.WithKind("Module"))
	module := func(ns, name, cm string) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		for range 2 {
			m.Spec.VariablesFrom = append(m.Spec.VariablesFrom, terraformv1.VariableFrom{ValueFrom: terraformv1.VariableSource{
				ConfigMapKeyRef: &terraformv1.ConfigMapKeySelector{Name: cm, Key: "k"}}})
		}
		return m
	}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).
		WithObjects(module("a", "reads", "sizes"), module("a", "other", "names"), module("b", "reads", "sizes")).
		WithIndex(&terraformv1.Module{}, watchIndex, watchKeys(kind)).Build()
	r := &connector{client: c, kind: kind}
	got := r.forVariableObject("ConfigMap")(context.Background(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "sizes"}})
	if len(got) != 1 || got[0].String() != "a/reads" {
		t.Errorf("requests %v, want a/reads once", got)
	}
}
