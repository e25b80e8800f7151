package app

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	kjson "sigs.k8s.io/json"

	"terraplane.io/terraplane/internal/runner"
)

// What a runner Deployment's pod requests at most, by default: little, so that idle
// pools cost little; it may use up to its limits (--runner-cpu, --runner-memory).
var runnerRequestCaps = corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("100m"), corev1.ResourceMemory: apiresource.MustParse("256Mi")}

// runnerResources are a runner pod's resources: opts' CPU and memory as limits, and
// requests of runnerRequestCaps, or the limit where that is lower.
func runnerResources(opts Options) (corev1.ResourceRequirements, error) {
	out := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: opts.RunnerCPU, corev1.ResourceMemory: opts.RunnerMemory} {
		if q == "" {
			continue
		}
		v, err := apiresource.ParseQuantity(q)
		if err != nil {
			return out, fmt.Errorf("runner %s %q: %w", name, q, err)
		}
		out.Limits[name], out.Requests[name] = v, v
		if c := runnerRequestCaps[name]; c.Cmp(v) < 0 {
			out.Requests[name] = c
		}
	}
	return out, nil
}

// runnerPodSettings reads --runner-pod: a JSON object of runner.PodSettings, whose
// unknown (or miscased) fields are refused.
func runnerPodSettings(raw string) (runner.PodSettings, error) {
	var s runner.PodSettings
	if raw == "" {
		return s, nil
	}
	strict, err := kjson.UnmarshalStrict([]byte(raw), &s)
	if err == nil && len(strict) > 0 {
		err = errors.Join(strict...)
	}
	if err != nil {
		return s, fmt.Errorf("--runner-pod: %w", err)
	}
	return s, nil
}

// providerBudget is the cap on the warm providers' memory of the controller's own
// engine: explicit when set, else half the container's memory limit (none without one).
func providerBudget(explicit int64, limits Limits) int64 {
	if explicit > 0 || limits.Memory <= 0 {
		return explicit
	}
	budget := limits.Memory / 2
	ctrl.Log.WithName("setup").Info("warm providers' memory capped", "providerMemoryBudget", budget, "from", "half the memory limit")
	return budget
}
