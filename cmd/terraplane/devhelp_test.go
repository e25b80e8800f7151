package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
)

// TestDevHelpSaysWhatItHolds: a restart that resumes resources does not say nothing is
// applied, and the hint names the S3 endpoint --quickstart really starts (moto_server).
func TestDevHelpSaysWhatItHolds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		f        fleet
		says     string
		saysNots []string
	}{
		{"a fresh plane", fleet{}, "with nothing applied yet", []string{"MinIO"}},
		{"a restart with Ready resources", fleet{resources: 8, ready: 8}, "8 managed resource(s), 8 of them Ready", []string{"nothing applied", "MinIO"}},
		{"some not Ready", fleet{resources: 3, ready: 1}, "3 managed resource(s), 1 of them Ready", []string{"nothing applied"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			printHelp(&out, devOptions{kubeconfigOut: "kc"}, tc.f)
			help := out.String()
			if !strings.Contains(help, tc.says) || !strings.Contains(help, "--quickstart starts moto_server") {
				t.Errorf("help does not say %q and name moto_server:\n%s", tc.says, help)
			}
			for _, not := range tc.saysNots {
				if strings.Contains(help, not) {
					t.Errorf("help says %q:\n%s", not, help)
				}
			}
		})
	}
	if f := newDevCommand(&devOptions{}).Flags().Lookup("quickstart"); !strings.Contains(f.Usage, "moto_server") {
		t.Errorf("--quickstart's help %q does not name moto_server", f.Usage)
	}
}

// TestCountFleet counts the managed resources dev resumes, and the Ready ones.
func TestCountFleet(t *testing.T) {
	mod := func(name string, ready metav1.ConditionStatus) *terraformv1.Module {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "terraplane-system"}}
		m.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: ready, Reason: "x", LastTransitionTime: metav1.Now()}}
		return m
	}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).
		WithObjects(mod("a", metav1.ConditionTrue), mod("b", metav1.ConditionTrue), mod("c", metav1.ConditionFalse)).Build()
	if diff := cmp.Diff(fleet{resources: 3, ready: 2}, countFleet(context.Background(), c), cmp.AllowUnexported(fleet{})); diff != "" {
		t.Errorf("fleet (-want +got):\n%s", diff)
	}
}
