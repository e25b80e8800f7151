package terraform

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
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
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	now := metav1.Now()
	m.Status.Terraform.LastPlanTime, m.Status.Terraform.InputsHash = &now, "h"
	resource.SetCondition(&m.Status.Conditions, 1, common.TypeSynced, metav1.ConditionTrue, "ReconcileSuccess", "")
	resource.SetCondition(&m.Status.Conditions, 1, common.TypeReady, metav1.ConditionTrue, common.ReasonAvailable, "")
	if due := isDue(m, "h"); due {
		t.Fatal("a resource planned just now is due")
	}
	m.Annotations = map[string]string{common.RequestedAtAnnotation: "2026-11-26T03:00:00Z"}
	if due := isDue(m, "h"); !due {
		t.Fatal("a new requested-at does not ask for a plan")
	}
	m.Status.Terraform.LastHandledRequest = "2026-11-26T03:00:00Z"
	if due := isDue(m, "h"); due {
		t.Fatal("a requested-at already answered asks again")
	}
}

// TestRevisionMoveIsDue: a resource told to run another class revision runs terraform
// at once, even when the revision renders the same inputs; once it ran it, it is not due.
func TestRevisionMoveIsDue(t *testing.T) {
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	now := metav1.Now()
	m.Status.Terraform.LastPlanTime, m.Status.Terraform.InputsHash = &now, "h"
	m.Spec.Revision, m.Status.Revision = "c-2", "c-1"
	resource.SetCondition(&m.Status.Conditions, 1, common.TypeSynced, metav1.ConditionTrue, "ReconcileSuccess", "")
	resource.SetCondition(&m.Status.Conditions, 1, common.TypeReady, metav1.ConditionTrue, common.ReasonAvailable, "")
	if due := isDue(m, "h"); !due {
		t.Fatal("a resource told to run another revision is not due")
	}
	m.Status.Revision = "c-2"
	if due := isDue(m, "h"); due {
		t.Fatal("a resource that runs its revision is due")
	}
}

// TestProviderConfigEditsReachTheirModules: a ProviderConfig maps to the Modules in its
// namespace that name it, as providerRef or among providerConfigRefs.
func TestProviderConfigEditsReachTheirModules(t *testing.T) {
	module := func(ns, name string, ref string, refs ...string) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if ref != "" {
			m.Spec.ProviderRef = &common.LocalReference{Name: ref}
		}
		for _, r := range refs {
			m.Spec.ProviderConfigRefs = append(m.Spec.ProviderConfigRefs, common.LocalReference{Name: r})
		}
		return m
	}
	kind, _ := kinds.NewRegistry(nil).Managed(terraformv1.GroupVersion.WithKind("Module"))
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(
		module("admin", "by-ref", "aws"), module("admin", "by-refs", "", "random", "aws"), module("admin", "other", "", "random"),
		module("elsewhere", "by-ref", "aws")).WithIndex(&terraformv1.Module{}, watchIndex, watchKeys(kind)).Build()
	r := &connector{client: c, kind: kind}
	pc := &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "admin", Name: "aws"}}
	var got []string
	for _, req := range r.forProvider(context.Background(), pc) {
		got = append(got, req.String())
	}
	sort.Strings(got)
	if diff := cmp.Diff([]string{"admin/by-ref", "admin/by-refs"}, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// isDue reports whether m is due for a run with inputs hash, planned hourly.
func isDue(m resource.Managed, hash string) bool {
	return situate(m, facts{hash: hash, driftInterval: time.Hour, now: time.Now()}).due != dueNot
}
