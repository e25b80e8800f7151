package stack

import (
	"context"
	"strings"
	"testing"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/stackpkg"
)

func TestCheckGraph(t *testing.T) {
	ix := &stackpkg.Index{Packages: map[string]stackpkg.IndexEntry{
		"s/a": {Package: "s/a:v1", Owns: []string{"as.a.io/v1"}, DependsOn: []string{"bs.b.io/v1"}},
		"s/b": {Package: "s/b:v1", Owns: []string{"bs.b.io/v1"}, DependsOn: []string{"*.c.io/v1"}},
		"s/c": {Package: "s/c:v2", Owns: []string{"cs.c.io/v1"}},
		"s/x": {Package: "s/x:v1", Owns: []string{"xs.x.io/v1"}, DependsOn: []string{"ys.y.io/v1"}},
		"s/y": {Package: "s/y:v1", Owns: []string{"ys.y.io/v1"}, DependsOn: []string{"zs.z.io/v1"}},
		"s/z": {Package: "s/z:v1", Owns: []string{"zs.z.io/v1"}, DependsOn: []string{"xs.x.io/v1"}},
		"s/o": {Package: "s/o:v1", Owns: []string{"os.o.io/v1"}, DependsOn: []string{"ghosts.g.io/v1"}},
	}}
	none := func(string) bool { return false }
	cases := map[string]struct {
		root      string
		deps      []string
		installed func(string) bool
		reason    string
		message   string
	}{
		"chain":                {root: "s/top", deps: []string{"as.a.io/v1"}, installed: none},
		"chain, c installed":   {root: "s/top", deps: []string{"as.a.io/v1"}, installed: func(c string) bool { return c == "*.c.io/v1" }},
		"cycle through three":  {root: "s/x", deps: []string{"ys.y.io/v1"}, installed: none, reason: stacksv1.ReasonDependencyCycle, message: "dependency cycle: s/x → s/y → s/z → s/x"},
		"missing, deep":        {root: "s/top", deps: []string{"os.o.io/v1"}, installed: none, reason: stacksv1.ReasonDependencyNotFound, message: "ghosts.g.io/v1 (needed by s/top → s/o)"},
		"missing, but present": {root: "s/top", deps: []string{"os.o.io/v1"}, installed: func(c string) bool { return c == "ghosts.g.io/v1" }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := checkGraph(ix, tc.root, tc.deps, tc.installed)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			u, ok := resource.AsUserError(err)
			if !ok || u.Reason != tc.reason || !strings.Contains(u.Message, tc.message) {
				t.Fatalf("got %v, want %s containing %q", err, tc.reason, tc.message)
			}
		})
	}
}

func TestRepoOf(t *testing.T) {
	for in, want := range map[string]string{"s/a:v1": "s/a", "s/a": "s/a", "host:5000/s/a:v1": "host:5000/s/a", "s/a@sha256:abababababababababababababababababababababababababababababababab": "s/a", "localhost/s/a:v1": "localhost/s/a"} {
		if got := repoOf(in); got != want {
			t.Errorf("repoOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAnnotated(t *testing.T) {
	obj := &stacksv1.Stack{}
	for value, want := range map[string]string{
		"StackInstall/ns/a":        "ns/a",
		"ClusterStackInstall/b":    "",
		"StackInstall/too/many/xs": "",
		"":                         "",
	} {
		obj.Annotations = map[string]string{stacksv1.AnnotationOwner: value}
		reqs := annotated("StackInstall", stacksv1.AnnotationOwner)(context.Background(), obj)
		got := ""
		if len(reqs) == 1 {
			got = reqs[0].String()
		}
		if got != want {
			t.Errorf("annotated(%q) = %q, want %q", value, got, want)
		}
	}
	obj.Annotations = map[string]string{stacksv1.AnnotationDependencyOf: "ClusterStackInstall/b"}
	if reqs := annotated("ClusterStackInstall", stacksv1.AnnotationDependencyOf)(context.Background(), obj); len(reqs) != 1 || reqs[0].Name != "b" || reqs[0].Namespace != "" {
		t.Errorf("cluster install: %v", reqs)
	}
}
