package workload

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
)

func app(names ...string) *workloadv1.KubernetesApplication {
	a := &workloadv1.KubernetesApplication{}
	a.Spec.ResourceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	a.Status.ClusterRef = &workloadv1.ClusterReference{Kind: workloadv1.ClusterKindClaim, Name: "c"}
	for _, n := range names {
		a.Spec.ResourceTemplates = append(a.Spec.ResourceTemplates, workloadv1.KubernetesApplicationResourceTemplate{
			Metadata: workloadv1.ResourceTemplateMetadata{Name: n, Labels: map[string]string{"app": "x"}}})
	}
	return a
}

func owned(states map[string]workloadv1.ResourceState) map[string]*workloadv1.KubernetesApplicationResource {
	out := map[string]*workloadv1.KubernetesApplicationResource{}
	for n, s := range states {
		out[n] = &workloadv1.KubernetesApplicationResource{Status: workloadv1.KubernetesApplicationResourceStatus{State: s}}
	}
	return out
}

func TestApplicationState(t *testing.T) {
	sub, pend, fail := workloadv1.ResourceStateSubmitted, workloadv1.ResourceStatePending, workloadv1.ResourceStateFailed
	unscheduled := app("a")
	unscheduled.Status.ClusterRef = nil
	cases := map[string]struct {
		app    *workloadv1.KubernetesApplication
		owned  map[string]workloadv1.ResourceState
		state  workloadv1.ApplicationState
		counts [2]int
	}{
		"unscheduled":          {unscheduled, nil, workloadv1.ApplicationStatePending, [2]int{1, 0}},
		"nothing created yet":  {app("a", "b"), nil, workloadv1.ApplicationStateScheduled, [2]int{2, 0}},
		"all submitted":        {app("a", "b"), map[string]workloadv1.ResourceState{"a": sub, "b": sub}, workloadv1.ApplicationStateSubmitted, [2]int{2, 2}},
		"some submitted":       {app("a", "b"), map[string]workloadv1.ResourceState{"a": sub, "b": pend}, workloadv1.ApplicationStatePartiallySubmitted, [2]int{2, 1}},
		"failed, none through": {app("a", "b"), map[string]workloadv1.ResourceState{"a": fail, "b": pend}, workloadv1.ApplicationStateFailed, [2]int{2, 0}},
		"no templates":         {app(), nil, workloadv1.ApplicationStateSubmitted, [2]int{0, 0}},
		"removed template not counted": {app("a"), map[string]workloadv1.ResourceState{"a": sub, "gone": fail},
			workloadv1.ApplicationStateSubmitted, [2]int{1, 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			state, desired, submitted := applicationState(tc.app, owned(tc.owned))
			if d := cmp.Diff([]any{tc.state, tc.counts}, []any{state, [2]int{desired, submitted}}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	unselected := app("a")
	unselected.Spec.ResourceTemplates[0].Metadata.Labels = map[string]string{"app": "y"}
	cases := map[string]struct {
		app    *workloadv1.KubernetesApplication
		reason string
	}{
		"valid":             {app("a", "b"), ""},
		"duplicate name":    {app("a", "a"), "DuplicateTemplate"},
		"labels unselected": {unselected, "TemplateNotSelected"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := validate(tc.app)
			u, _ := resource.AsUserError(err)
			got := ""
			if u != nil {
				got = u.Reason
			}
			if got != tc.reason || (tc.reason == "" && err != nil) {
				t.Errorf("want reason %q, got %v", tc.reason, err)
			}
		})
	}
}
