package stack

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/stackpkg"
)

// establishedCRD is an established CRD plural.group serving versions.
func establishedCRD(plural, group string, established bool, served ...bool) *apiextensionsv1.CustomResourceDefinition {
	c := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group}}
	c.Spec.Group = group
	for i, s := range served {
		c.Spec.Versions = append(c.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{Name: "v" + string(rune('1'+i)), Served: s})
	}
	if established {
		c.Status.Conditions = []apiextensionsv1.CustomResourceDefinitionCondition{{Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionTrue}}
	}
	return c
}

// TestInstalledCRDs: only established CRDs count, and only the versions they serve.
func TestInstalledCRDs(t *testing.T) {
	c := stackClient(establishedCRD("widgets", "alpha.io", true, true, false), establishedCRD("gadgets", "alpha.io", false, true))
	installed, err := installer(c, events.NewFakeRecorder(1)).installedCRDs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for dep, want := range map[string]bool{
		"widgets.alpha.io/v1": true, "widgets.alpha.io/v2": false, "gadgets.alpha.io/v1": false,
		"*.alpha.io/v1": true, "*.alpha.io/v2": false, "*.beta.io/v1": false,
	} {
		if got := installed(dep); got != want {
			t.Errorf("installed(%s) = %v, want %v", dep, got, want)
		}
	}
}

// TestDependencies: a package whose dependencies are installed (or its own) goes on; a
// missing one gets an install of the package that owns it, and the install waits; a
// dependency no package owns is a user error.
func TestDependencies(t *testing.T) {
	host := testRegistry(t)
	ctx := context.Background()
	cases := map[string]struct {
		pkg       string
		installed bool
		reason    string
		wantDep   bool
	}{
		"installed already":   {"stacks/needs:v1", true, "", false},
		"missing":             {"stacks/needs:v1", false, stacksv1.ReasonWaitingForDependencies, true},
		"owned by no package": {"stacks/lost:v1", false, stacksv1.ReasonDependencyNotFound, false},
		"no dependencies":     {"stacks/plain:v1", false, "", false},
	}
	for caseName, tc := range cases {
		t.Run(caseName, func(t *testing.T) {
			var objs []client.Object
			if tc.installed {
				objs = append(objs, establishedCRD("gadgets", "beta.io", true, true))
			}
			obj := testInstall()
			obj.Spec.PullSecretName = "creds"
			c := stackClient(append(objs, obj)...)
			r := installer(c, events.NewFakeRecorder(1))
			ref, err := name.ParseReference(host+"/"+tc.pkg, name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			p, err := stackpkg.Pull(ctx, ref, stackpkg.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			err = r.dependencies(ctx, &install{obj: obj, registry: host, ref: ref, pkg: p})
			switch w, waiting := resource.AsWaiting(err); {
			case tc.reason == "" && err != nil:
				t.Fatalf("dependencies = %v, want none", err)
			case tc.reason == stacksv1.ReasonWaitingForDependencies && (!waiting || w.Reason != tc.reason || !strings.Contains(w.Message, "gadgets.beta.io/v1 from stacks/beta:v1 (install beta created)")):
				t.Fatalf("dependencies = %v, want waiting for the beta install", err)
			case tc.reason == stacksv1.ReasonDependencyNotFound:
				if u, ok := resource.AsUserError(err); !ok || u.Reason != tc.reason {
					t.Fatalf("dependencies = %v, want %s", err, tc.reason)
				}
			}
			dep := &stacksv1.StackInstall{}
			err = c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "beta"}, dep)
			if (err == nil) != tc.wantDep {
				t.Fatalf("dependency install made: %v, want %v", err == nil, tc.wantDep)
			}
			if tc.wantDep {
				want := stacksv1.StackInstallSpec{Source: host, Package: "stacks/beta:v1", PullSecretName: "creds"}
				if diff := cmp.Diff(want, dep.Spec); diff != "" || dep.Annotations[stacksv1.AnnotationDependencyOf] != owner {
					t.Errorf("dependency annotations %v; spec (-want +got):\n%s", dep.Annotations, diff)
				}
			}
		})
	}
}

// TestEnsureDependency: an existing install of the dependency is reported as it stands;
// one of that name for another package is a Conflict; a cluster install makes a cluster
// install targeting its own namespace.
func TestEnsureDependency(t *testing.T) {
	ctx := context.Background()
	existing := func(pkg string, conds ...metav1.Condition) *stacksv1.StackInstall {
		d := &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "beta"}, Spec: stacksv1.StackInstallSpec{Package: pkg}}
		d.Status.Conditions = conds
		return d
	}
	cases := map[string]struct {
		dep    *stacksv1.StackInstall
		want   string
		reason string
	}{
		"in progress":         {existing("stacks/beta:v1"), "install beta in progress", ""},
		"another tag":         {existing("stacks/beta:v2"), "install beta in progress", ""},
		"failing":             {existing("stacks/beta:v1", metav1.Condition{Type: common.TypeReady, Status: metav1.ConditionFalse, Reason: "PackageNotFound", Message: "gone"}), "install beta: PackageNotFound: gone", ""},
		"for another package": {existing("other/beta:v1"), "", stacksv1.ReasonConflict},
	}
	for caseName, tc := range cases {
		t.Run(caseName, func(t *testing.T) {
			r := installer(stackClient(tc.dep), events.NewFakeRecorder(1))
			msg, err := r.ensureDependency(ctx, &install{obj: testInstall()}, "stacks/beta:v1")
			if u, ok := resource.AsUserError(err); tc.reason != "" && (!ok || u.Reason != tc.reason) || tc.reason == "" && err != nil {
				t.Fatalf("ensureDependency = %v, want %q", err, tc.reason)
			}
			if msg != tc.want {
				t.Errorf("message %q, want %q", msg, tc.want)
			}
		})
	}
	cluster := &stacksv1.ClusterStackInstall{ObjectMeta: metav1.ObjectMeta{Name: "alpha"}, Spec: stacksv1.ClusterStackInstallSpec{TargetNamespace: "platform"}}
	gone := stackClient()
	r := installer(gone, events.NewFakeRecorder(1))
	r.newObj = func() installObject { return &stacksv1.ClusterStackInstall{} }
	if msg, err := r.ensureDependency(ctx, &install{obj: cluster, registry: "reg"}, "stacks/beta:v1"); err != nil || !strings.Contains(msg, "being deleted") {
		t.Errorf("a dependent the API server no longer has = %q, %v; want nothing made, and said", msg, err)
	}
	if err := gone.Get(ctx, client.ObjectKey{Name: "beta"}, &stacksv1.ClusterStackInstall{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dependent deleted meanwhile made its dependency: %v", err)
	}
	c := stackClient(cluster)
	r = installer(c, events.NewFakeRecorder(1))
	r.newObj = func() installObject { return &stacksv1.ClusterStackInstall{} }
	if _, err := r.ensureDependency(ctx, &install{obj: cluster, registry: "reg"}, "stacks/beta:v1"); err != nil {
		t.Fatal(err)
	}
	dep := &stacksv1.ClusterStackInstall{}
	if err := c.Get(ctx, client.ObjectKey{Name: "beta"}, dep); err != nil || dep.Spec.TargetNamespace != "platform" || dep.Annotations[stacksv1.AnnotationDependencyOf] != "ClusterStackInstall/alpha" {
		t.Errorf("cluster dependency %+v, %v", dep, err)
	}
}

// TestStackReady: the install waits until its Stack reports Ready for its generation.
func TestStackReady(t *testing.T) {
	stack := func(status metav1.ConditionStatus, gen, observed int64) *stacksv1.Stack {
		s := &stacksv1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha", Generation: gen}}
		s.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: status, ObservedGeneration: observed, Reason: "x", LastTransitionTime: metav1.Now()}}
		return s
	}
	cases := map[string]struct {
		objs  []client.Object
		ready bool
	}{
		"no Stack yet":          {nil, false},
		"not ready":             {[]client.Object{stack(metav1.ConditionFalse, 1, 1)}, false},
		"ready for an old spec": {[]client.Object{stack(metav1.ConditionTrue, 2, 1)}, false},
		"ready":                 {[]client.Object{stack(metav1.ConditionTrue, 2, 2)}, true},
	}
	for caseName, tc := range cases {
		t.Run(caseName, func(t *testing.T) {
			err := installer(stackClient(tc.objs...), events.NewFakeRecorder(1)).stackReady(context.Background(), &install{obj: testInstall()})
			if w, waiting := resource.AsWaiting(err); tc.ready && err != nil || !tc.ready && (!waiting || w.Reason != stacksv1.ReasonWaitingForStack) {
				t.Errorf("stackReady = %v, want ready %v", err, tc.ready)
			}
		})
	}
}
