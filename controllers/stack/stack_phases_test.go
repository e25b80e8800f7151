package stack

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
)

func TestRules(t *testing.T) {
	spec := stacksv1.StackSpec{CRDs: stacksv1.CRDs{
		Owned:     stacksv1.CRDList{"widgets.alpha.io/v1", "widgets.alpha.io/v2", "sprockets.alpha.io/v1"},
		DependsOn: stacksv1.CRDList{"gadgets.beta.io/v1", "*.gamma.io/v1", "things.gamma.io/v1"},
	}}
	got, err := Rules(spec)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]rbacv1.PolicyRule{
		{APIGroups: []string{"alpha.io"}, Resources: []string{"sprockets", "sprockets/finalizers", "sprockets/status", "widgets", "widgets/finalizers", "widgets/status"}, Verbs: allVerbs},
		{APIGroups: []string{"beta.io"}, Resources: []string{"gadgets", "gadgets/finalizers", "gadgets/status"}, Verbs: allVerbs},
		{APIGroups: []string{"gamma.io"}, Resources: []string{"*"}, Verbs: allVerbs},
	}, coreRules...)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if _, err := Rules(stacksv1.StackSpec{CRDs: stacksv1.CRDs{Owned: stacksv1.CRDList{"nonsense"}}}); err == nil {
		t.Error("a CRD that is not plural.group/version must be refused")
	}
}

// TestRulesRefuseReservedGroups: a Stack that owns or depends on a CRD of Terraplane's
// or Kubernetes' own groups gets no rules at all, rather than every verb there.
func TestRulesRefuseReservedGroups(t *testing.T) {
	for name, crds := range map[string]stacksv1.CRDs{
		"dependsOn Modules":               {DependsOn: stacksv1.CRDList{"modules.terraform.terraplane.io/v1alpha1"}},
		"dependsOn all of terraform":      {DependsOn: stacksv1.CRDList{"*.terraform.terraplane.io/v1alpha1"}},
		"dependsOn stacks":                {DependsOn: stacksv1.CRDList{"*.stacks.terraplane.io/v1alpha1"}},
		"dependsOn rbac":                  {DependsOn: stacksv1.CRDList{"*.rbac.authorization.k8s.io/v1"}},
		"dependsOn admission":             {DependsOn: stacksv1.CRDList{"validatingadmissionpolicies.admissionregistration.k8s.io/v1"}},
		"dependsOn apps":                  {DependsOn: stacksv1.CRDList{"deployments.apps/v1"}},
		"dependsOn kubernetes.io":         {DependsOn: stacksv1.CRDList{"*.metrics.kubernetes.io/v1beta1"}},
		"owns a terraplane.io kind":       {Owned: stacksv1.CRDList{"buckets.storage.terraplane.io/v1alpha1"}},
		"one reserved among allowed ones": {Owned: stacksv1.CRDList{"widgets.alpha.io/v1"}, DependsOn: stacksv1.CRDList{"gadgets.beta.io/v1", "*.apiextensions.k8s.io/v1"}},
	} {
		rules, err := Rules(stacksv1.StackSpec{CRDs: crds})
		if err == nil || !strings.Contains(err.Error(), "reserved group") || rules != nil {
			t.Errorf("%s: Rules = %v, %v; want a reserved group error and no rules", name, rules, err)
		}
	}
}

func TestWithPodEnv(t *testing.T) {
	got := withPodEnv([]corev1.EnvVar{{Name: "POD_NAME", Value: "spoofed"}, {Name: "LOG", Value: "debug"}})
	names := []string{}
	for _, e := range got {
		names = append(names, e.Name)
	}
	if diff := cmp.Diff([]string{"POD_NAME", "POD_NAMESPACE", "LOG"}, names); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if got[0].Value != "" || got[0].ValueFrom.FieldRef.FieldPath != "metadata.name" || got[1].ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
		t.Errorf("POD_NAME/POD_NAMESPACE must come from the downward API: %+v", got[:2])
	}
}

func TestDependencyName(t *testing.T) {
	for in, want := range map[string]string{"stacks/gamma:v1": "gamma", "stacks/gamma_db:v1": "gamma-db", "x/-a-:v1": "stack-a"} {
		if got := dependencyName(in); got != want {
			t.Errorf("dependencyName(%q) = %q, want %q", in, got, want)
		}
	}
}
