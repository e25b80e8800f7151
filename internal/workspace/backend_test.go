package workspace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/render"
)

func TestBackend(t *testing.T) {
	cases := map[string]struct {
		r    Renderer
		want render.Backend
	}{
		"in-cluster": {Renderer{}, render.Backend{Type: "kubernetes", Config: map[string]any{"in_cluster_config": true}}},
		"one kubeconfig at a context": {Renderer{StateKubeconfig: "/kc", StateContext: "ctx"},
			render.Backend{Type: "kubernetes", Config: map[string]any{"config_path": "/kc", "config_context": "ctx"}}},
		"several kubeconfigs": {Renderer{StateKubeconfig: "/a:/b"},
			render.Backend{Type: "kubernetes", Config: map[string]any{"config_paths": []string{"/a", "/b"}}}},
		"local state": {Renderer{LocalState: true, StateKubeconfig: "/kc"}, render.Backend{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.r.backend()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	mg := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", UID: "a-b-c"}}
	if got := (&Renderer{LocalState: true}).backendConfig(mg); got != nil {
		t.Errorf("local state has backend settings %v", got)
	}
	if diff := cmp.Diff(map[string]string{"secret_suffix": "abc", "namespace": "ns"}, (&Renderer{}).backendConfig(mg)); diff != "" {
		t.Errorf("backend settings (-want +got):\n%s", diff)
	}
}

func TestVariableValue(t *testing.T) {
	mod, err := module.FromFiles(map[string][]byte{"main.tf": []byte(`
variable "s" { type = string }
variable "n" { type = number }
variable "m" { type = map(string) }
variable "any" {}
`)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, raw string
		want      any
	}{
		{"s", "3", "3"},
		{"s", `{"a": 1}`, `{"a": 1}`},
		{"n", "3", float64(3)},
		{"n", "three", "three"},
		{"m", `{"a": "b"}`, map[string]any{"a": "b"}},
		{"any", "true", true},
		{"undeclared", "3", "3"},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, variableValue(mod, tc.name, tc.raw)); diff != "" {
			t.Errorf("variable %s = %q (-want +got):\n%s", tc.name, tc.raw, diff)
		}
	}
}

// TestHash: the hash changes with every file, the environment's names and the sources
// of variables, and never with a secret value.
func TestHash(t *testing.T) {
	base := func() engine.Workspace {
		return engine.Workspace{Files: map[string][]byte{"main.tf.json": []byte("{}"), "module/main.tf": []byte("x")},
			Env: map[string]string{"TOKEN": "s3cret"}}
	}
	sources := []string{"Secret/db@1"}
	h0 := hashWorkspace(base(), sources)
	cases := map[string]struct {
		edit    func(*engine.Workspace)
		sources []string
		same    bool
	}{
		"nothing changed":           {edit: func(*engine.Workspace) {}, sources: sources, same: true},
		"a secret value changed":    {edit: func(ws *engine.Workspace) { ws.Env["TOKEN"] = "rotated" }, sources: sources, same: true},
		"a file changed":            {edit: func(ws *engine.Workspace) { ws.Files["module/main.tf"] = []byte("y") }, sources: sources},
		"a file was added":          {edit: func(ws *engine.Workspace) { ws.Files["extra.tf"] = nil }, sources: sources},
		"a file moved its content":  {edit: func(ws *engine.Workspace) { ws.Files["main.tf.json"], ws.Files["module/main.tf"] = []byte("{}x"), nil }, sources: sources},
		"a setting was added":       {edit: func(ws *engine.Workspace) { ws.Env["REGION"] = "x" }, sources: sources},
		"a variable's source moved": {edit: func(*engine.Workspace) {}, sources: []string{"Secret/db@2"}},
	}
	for name, tc := range cases {
		ws := base()
		tc.edit(&ws)
		h := hashWorkspace(ws, tc.sources)
		if (h == h0) != tc.same || len(h) != 32 {
			t.Errorf("%s: hash %s against %s; want same=%v", name, h, h0, tc.same)
		}
	}
}
