package app

import (
	"strings"
	"testing"

	"terraplane.io/terraplane/internal/runner"
)

// TestRunnerOfRefuses: a runner mode that does not exist, and runner Deployments without
// an image, with resources that are no quantities or with pod settings not strict JSON,
// are refused before anything starts, with what to fix.
func TestRunnerOfRefuses(t *testing.T) {
	cases := map[string]struct {
		opts Options
		want string
	}{
		"an unknown mode":       {Options{Runner: "pods"}, "want in-process, process or deployment"},
		"no image":              {Options{Runner: RunnerDeployment}, "needs --runner-image"},
		"CPU of no measure":     {Options{Runner: RunnerDeployment, RunnerImage: "terraplane:v1", RunnerCPU: "lots"}, `runner cpu "lots"`},
		"memory of junk":        {Options{Runner: RunnerDeployment, RunnerImage: "terraplane:v1", RunnerMemory: "2 GB"}, `runner memory "2 GB"`},
		"pod settings not JSON": {Options{Runner: RunnerDeployment, RunnerImage: "terraplane:v1", RunnerPod: `{"tolerations":`}, "--runner-pod"},
		"pod settings misspelt": {Options{Runner: RunnerDeployment, RunnerImage: "terraplane:v1", RunnerPod: `{"PriorityClassName":"x"}`}, "--runner-pod"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := runnerOf(nil, nil, tc.opts, &runner.Local{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("runnerOf = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
