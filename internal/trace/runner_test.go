package trace

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRunners: the runner node of a managed resource is an object kubectl get finds, and
// names its pool (spec.runnerPool, else default) in tables: the pool's Deployment, ready
// or not, else the pool's ServiceAccount that a runner process runs as; nothing where the pool has no runner
// (terraform runs in the controller) or the kind runs no terraform; Forbidden where the
// caller may not look.
func TestRunners(t *testing.T) {
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: terraplane-runner-%s, namespace: platform}
spec: {replicas: 1, selector: {matchLabels: {a: b}}, template: {metadata: {labels: {a: b}}, spec: {containers: [{name: runner, image: x}]}}}
status: {readyReplicas: %d}`
	const account = "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: terraplane-runner-%s, namespace: platform}"
	module := func(pool string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "terraform.terraplane.io/v1alpha1", "kind": "Module",
			"metadata": map[string]any{"name": "m", "namespace": "platform"}, "spec": map[string]any{}}}
		if pool != "" {
			_ = unstructured.SetNestedField(u.Object, pool, "spec", "runnerPool")
		}
		return u
	}
	object := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubernetes.terraplane.io/v1alpha1", "kind": "Object",
		"metadata": map[string]any{"name": "o", "namespace": "platform"}}}
	type got struct{ APIVersion, Kind, Name, Ready, Reason, Message, Error string }
	for name, tc := range map[string]struct {
		fixtures  string
		mg        *unstructured.Unstructured
		forbidden []string
		want      *got
	}{
		"a ready Deployment": {fixtures: sprintf(deployment, "default", 1), mg: module(""),
			want: &got{"apps/v1", "Deployment", "terraplane-runner-default", "True", "Running", "Deployment terraplane-runner-default: 1 of 1 replicas ready", ""}},
		"a Deployment not ready yet": {fixtures: sprintf(deployment, "default", 0), mg: module(""),
			want: &got{"apps/v1", "Deployment", "terraplane-runner-default", "False", "NotReady", "Deployment terraplane-runner-default: 0 of 1 replicas ready", ""}},
		"the pool the resource names": {fixtures: sprintf(deployment, "default", 1) + "\n---\n" + sprintf(account, "team-b"), mg: module("team-b"),
			want: &got{"v1", "ServiceAccount", "terraplane-runner-team-b", "", "Process", "a runner process of the controller (--runner process), as ServiceAccount terraplane-runner-team-b", ""}},
		"no runner: terraform runs in the controller": {fixtures: sprintf(account, "team-b"), mg: module("")},
		"a native kind runs no terraform":             {fixtures: sprintf(deployment, "default", 1), mg: object},
		"the caller may not look": {fixtures: sprintf(deployment, "default", 1), mg: module(""), forbidden: []string{"platform"},
			want: &got{Kind: RunnerPoolKind, Name: "default", Error: "Forbidden"}},
	} {
		t.Run(name, func(t *testing.T) {
			tr := tracer(t, objects(t, tc.fixtures), tc.forbidden...)
			r := Runners{Reader: tr.Reader, Terraform: tr.Kinds.(*KindInfo).RunsTerraform}
			n := r.Node(context.Background(), tc.mg)
			var g *got
			if n != nil {
				g = &got{n.APIVersion, n.Kind, n.Name, n.Ready, n.Reason, n.Message, n.Error}
				if !strings.HasPrefix(n.Display, "RunnerPool/") || n.Namespace != "platform" {
					t.Errorf("node %+v: want a RunnerPool node of namespace platform", n)
				}
				if n.Derived != (n.Error != "") {
					t.Errorf("node %+v: derived %v; only a node read from no object is derived", n, n.Derived)
				}
			}
			if tc.want != nil && tc.want.Error != "" && g != nil {
				g.Message = ""
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
