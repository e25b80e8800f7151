package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
)

// TestRunnerResources: a runner pod is limited to --runner-cpu and --runner-memory and
// requests at most 100m and 256Mi; --runner-pod is strict JSON; the warm providers'
// budget defaults to half the memory limit, and to none without one.
func TestRunnerResources(t *testing.T) {
	q := apiresource.MustParse
	cases := map[string]struct {
		cpu, memory string
		want        corev1.ResourceRequirements
	}{
		"defaults": {"1", "2Gi", corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: q("1"), corev1.ResourceMemory: q("2Gi")}}},
		"below the request caps": {"50m", "128Mi", corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("50m"), corev1.ResourceMemory: q("128Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: q("50m"), corev1.ResourceMemory: q("128Mi")}}},
		"none": {"", "", corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}},
	}
	for name, tc := range cases {
		got, err := runnerResources(Options{RunnerCPU: tc.cpu, RunnerMemory: tc.memory})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if _, err := runnerResources(Options{RunnerCPU: "lots"}); err == nil {
		t.Error("a CPU of lots was taken")
	}
	s, err := runnerPodSettings(`{"imagePullSecrets":[{"name":"registry"}],"priorityClassName":"platform","resources":{"limits":{"memory":"1Gi"}}}`)
	if err != nil || s.ImagePullSecrets[0].Name != "registry" || s.PriorityClassName != "platform" || s.Resources.Limits.Memory().String() != "1Gi" {
		t.Errorf("runnerPodSettings = %+v, %v", s, err)
	}
	if _, err := runnerPodSettings(`{"nodeselector":{"a":"b"}}`); err == nil {
		t.Error("a misspelt field of --runner-pod was taken")
	}
	budgets := map[string][2]int64{"explicit": {100, 100}, "half the limit": {0, 1 << 30}, "no limit": {0, 0}}
	limits := map[string]int64{"explicit": 2 << 30, "half the limit": 2 << 30, "no limit": 0}
	for name, b := range budgets {
		if got := providerBudget(b[0], Limits{Memory: limits[name]}); got != b[1] {
			t.Errorf("%s: budget %d, want %d", name, got, b[1])
		}
	}
}
