package stack

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/stackpkg"
)

// installer is an InstallReconciler of StackInstalls over c, its events in rec.
func installer(c client.Client, rec *events.FakeRecorder) *InstallReconciler {
	return &InstallReconciler{client: c, reader: c, recorder: resource.RecorderFor(rec), opts: Options{UserErrorRetry: 30e9},
		newObj: func() installObject { return &stacksv1.StackInstall{} }}
}

func testInstall() *stacksv1.StackInstall {
	return &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha", Generation: 1}}
}

const owner = "StackInstall/apps/alpha"

// testCRD is the CRD plural.alpha.io with one version, annotated by annotations.
func testCRD(plural string, annotations map[string]string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".alpha.io", Annotations: annotations},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: "alpha.io", Scope: apiextensionsv1.NamespaceScoped,
			Names:    apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: strings.ToUpper(plural[:1]) + plural[1:len(plural)-1], ListKind: "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}}},
	}
}

// TestClaim: the install takes what is new, or its own, or what an uninstall kept; what
// another stack (or nobody) made is a Conflict naming the owner.
func TestClaim(t *testing.T) {
	cases := map[string]struct {
		annotations map[string]string
		exists      bool
		conflict    string
	}{
		"new":                       {nil, false, ""},
		"ours":                      {map[string]string{stacksv1.AnnotationOwner: owner}, true, ""},
		"kept by an uninstall":      {map[string]string{stacksv1.AnnotationKeptFrom: "StackInstall/apps/old"}, true, ""},
		"another stack's":           {map[string]string{stacksv1.AnnotationOwner: "StackInstall/apps/beta"}, true, "owned by StackInstall/apps/beta"},
		"nobody's":                  {map[string]string{"x": "y"}, true, "owned by no stack"},
		"nobody's, no annotations":  {nil, true, "owned by no stack"},
		"another's, kept elsewhere": {map[string]string{stacksv1.AnnotationOwner: "StackInstall/apps/beta", stacksv1.AnnotationKeptFrom: "x"}, true, "owned by StackInstall/apps/beta"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := testCRD("widgets", tc.annotations)
			obj.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
			err := claim(obj, owner, tc.exists)
			if tc.conflict != "" {
				u, ok := resource.AsUserError(err)
				if !ok || u.Reason != stacksv1.ReasonConflict || !strings.Contains(u.Message, tc.conflict) || !strings.Contains(u.Message, "CustomResourceDefinition widgets.alpha.io") {
					t.Fatalf("claim = %v, want a Conflict saying %q", err, tc.conflict)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a := obj.GetAnnotations(); a[stacksv1.AnnotationOwner] != owner || a[stacksv1.AnnotationKeptFrom] != "" {
				t.Errorf("annotations %v, want owned by %s and kept-from gone", a, owner)
			}
		})
	}
}

// TestApplyCRDs: every CRD is checked before any is written, so a collision writes none;
// new ones are created and owned ones updated, annotated and labelled for the stack.
func TestApplyCRDs(t *testing.T) {
	ctx := context.Background()
	mine := testCRD("gadgets", map[string]string{stacksv1.AnnotationOwner: owner})
	theirs := testCRD("sprockets", map[string]string{stacksv1.AnnotationOwner: "StackInstall/apps/beta"})
	cases := map[string]struct {
		want     []*apiextensionsv1.CustomResourceDefinition
		conflict bool
	}{
		"new and owned":           {[]*apiextensionsv1.CustomResourceDefinition{testCRD("widgets", nil), testCRD("gadgets", nil)}, false},
		"a collision writes none": {[]*apiextensionsv1.CustomResourceDefinition{testCRD("widgets", nil), testCRD("sprockets", nil)}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := stackClient(mine.DeepCopy(), theirs.DeepCopy())
			r := installer(c, events.NewFakeRecorder(10))
			for _, crd := range tc.want {
				crd.Annotations = map[string]string{"from": "package"}
			}
			in := &install{obj: testInstall(), pkg: &stackpkg.Pulled{Package: &stackpkg.Package{CRDs: tc.want}}}
			err := r.applyCRDs(ctx, in)
			if u, ok := resource.AsUserError(err); tc.conflict != (ok && u.Reason == stacksv1.ReasonConflict) || !tc.conflict && err != nil {
				t.Fatalf("applyCRDs = %v, want a conflict: %v", err, tc.conflict)
			}
			got := &apiextensionsv1.CustomResourceDefinition{}
			widgets := c.Get(ctx, client.ObjectKey{Name: "widgets.alpha.io"}, got) == nil
			if widgets == tc.conflict {
				t.Errorf("widgets.alpha.io written: %v, want %v", widgets, !tc.conflict)
			}
			if !tc.conflict && (got.Annotations[stacksv1.AnnotationOwner] != owner || got.Annotations["from"] != "package" || got.Labels[stacksv1.LabelStack] != "alpha") {
				t.Errorf("widgets annotations %v labels %v", got.Annotations, got.Labels)
			}
			if err := c.Get(ctx, client.ObjectKey{Name: "sprockets.alpha.io"}, got); err != nil || got.Annotations[stacksv1.AnnotationOwner] != "StackInstall/apps/beta" {
				t.Errorf("another stack's CRD was changed: %v %v", got.Annotations, err)
			}
		})
	}
}

func configMapRef(name string) stacksv1.ObjectReference {
	return stacksv1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: "apps", Name: name}
}

// TestApplyTerraform: modules become ConfigMaps and classes are applied in the install's
// namespace; what the previous version installed and this one does not is deleted,
// except a module ConfigMap Modules still use, which is kept and told of.
func TestApplyTerraform(t *testing.T) {
	ctx := context.Background()
	ownedCM := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, Annotations: map[string]string{stacksv1.AnnotationOwner: owner}}}
	}
	user := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "uses-kept"}}
	user.Spec.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: "kept"}
	class := &unstructured.Unstructured{}
	class.SetAPIVersion("database.terraplane.io/v1alpha1")
	class.SetKind("PostgreSQLInstanceClass")
	class.SetName("small")
	c := stackClient(ownedCM("old"), ownedCM("kept"), user)
	rec := events.NewFakeRecorder(10)
	r := installer(c, rec)
	obj := testInstall()
	obj.Status.InstalledObjects = []stacksv1.ObjectReference{configMapRef("net"), configMapRef("old"), configMapRef("kept")}
	in := &install{obj: obj, pkg: &stackpkg.Pulled{Package: &stackpkg.Package{
		Modules: map[string]map[string]string{"net": {"main.tf": "# net"}, "db": {"main.tf": "# db"}},
		Objects: []*unstructured.Unstructured{class},
	}}}
	if err := r.applyTerraform(ctx, in); err != nil {
		t.Fatal(err)
	}
	want := []stacksv1.ObjectReference{configMapRef("db"), configMapRef("net"),
		{APIVersion: "database.terraplane.io/v1alpha1", Kind: "PostgreSQLInstanceClass", Namespace: "apps", Name: "small"}}
	if diff := cmp.Diff(want, obj.Status.InstalledObjects); diff != "" {
		t.Errorf("installedObjects (-want +got):\n%s", diff)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "net"}, cm); err != nil || cm.Data["main.tf"] != "# net" || cm.Annotations[stacksv1.AnnotationOwner] != owner {
		t.Errorf("module ConfigMap %+v, %v", cm, err)
	}
	if exists(t, c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "old"}}) {
		t.Error("a module this version dropped is left")
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "kept"}, cm); err != nil || cm.Annotations[stacksv1.AnnotationKeptFrom] != owner || cm.Annotations[stacksv1.AnnotationOwner] != "" {
		t.Errorf("a module in use: %v, %v; want kept, marked kept-from", cm.Annotations, err)
	}
	if len(rec.Events) != 1 || !strings.Contains(<-rec.Events, "ConfigMap apps/kept") {
		t.Error("no event tells of the kept module")
	}
}

// TestApplyTerraformScope: a StackInstall installs only into its own namespace and no
// ClaimDefinition; a ClusterStackInstall may do both.
func TestApplyTerraformScope(t *testing.T) {
	obj := func(apiVersion, kind, ns string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName("x")
		u.SetNamespace(ns)
		return u
	}
	cases := map[string]struct {
		obj     *unstructured.Unstructured
		cluster bool
		refused bool
	}{
		"a class in its namespace":            {obj("database.terraplane.io/v1alpha1", "PostgreSQLInstanceClass", "apps"), false, false},
		"a class in another namespace":        {obj("database.terraplane.io/v1alpha1", "PostgreSQLInstanceClass", "other"), false, true},
		"a claim definition":                  {obj("apiextensions.terraplane.io/v1alpha1", "ClaimDefinition", ""), false, true},
		"a class elsewhere, cluster install":  {obj("database.terraplane.io/v1alpha1", "PostgreSQLInstanceClass", "other"), true, false},
		"a claim definition, cluster install": {obj("apiextensions.terraplane.io/v1alpha1", "ClaimDefinition", ""), true, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var o installObject = testInstall()
			if tc.cluster {
				o = &stacksv1.ClusterStackInstall{ObjectMeta: metav1.ObjectMeta{Name: "alpha"}, Spec: stacksv1.ClusterStackInstallSpec{TargetNamespace: "apps"}}
			}
			r := installer(stackClient(), events.NewFakeRecorder(10))
			err := r.applyTerraform(context.Background(), &install{obj: o, pkg: &stackpkg.Pulled{Package: &stackpkg.Package{Objects: []*unstructured.Unstructured{tc.obj}}}})
			if u, ok := resource.AsUserError(err); tc.refused != (ok && u.Reason == stacksv1.ReasonScopeNotAllowed) || !tc.refused && err != nil {
				t.Errorf("applyTerraform = %v, want refused: %v", err, tc.refused)
			}
		})
	}
}

// TestApplyTerraformExecutable: what runs code for claims (ModuleClasses) or configures
// providers (terraform ProviderConfigs) comes only from a ClusterStackInstall whose admin
// allowed it; a StackInstall is refused them, with a reason that says what would allow it.
func TestApplyTerraformExecutable(t *testing.T) {
	obj := func(apiVersion, kind string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName("x")
		u.SetNamespace("apps")
		return u
	}
	moduleClass := obj("terraform.terraplane.io/v1alpha1", "ModuleClass")
	providerConfig := obj("terraform.terraplane.io/v1alpha1", "ProviderConfig")
	portable := obj("database.terraplane.io/v1alpha1", "PostgreSQLInstanceClass")
	stackInstall := func() installObject { return testInstall() }
	cluster := func(allow bool) func() installObject {
		return func() installObject {
			return &stacksv1.ClusterStackInstall{ObjectMeta: metav1.ObjectMeta{Name: "alpha"},
				Spec: stacksv1.ClusterStackInstallSpec{TargetNamespace: "apps", AllowTerraform: allow}}
		}
	}
	cases := map[string]struct {
		install func() installObject
		objs    []*unstructured.Unstructured
		refused bool
	}{
		"a StackInstall's ModuleClass":                     {stackInstall, []*unstructured.Unstructured{portable, moduleClass}, true},
		"a StackInstall's terraform ProviderConfig":        {stackInstall, []*unstructured.Unstructured{providerConfig}, true},
		"a StackInstall's portable class":                  {stackInstall, []*unstructured.Unstructured{portable}, false},
		"a ClusterStackInstall's ModuleClass, not allowed": {cluster(false), []*unstructured.Unstructured{moduleClass}, true},
		"a ClusterStackInstall's ModuleClass, allowed":     {cluster(true), []*unstructured.Unstructured{moduleClass, providerConfig}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := stackClient()
			r := installer(c, events.NewFakeRecorder(10))
			objs := make([]*unstructured.Unstructured, len(tc.objs))
			for i, o := range tc.objs {
				objs[i] = o.DeepCopy()
			}
			err := r.applyTerraform(context.Background(), &install{obj: tc.install(), pkg: &stackpkg.Pulled{Package: &stackpkg.Package{Objects: objs}}})
			u, user := resource.AsUserError(err)
			if got := user && u.Reason == common.ReasonTerraformNotAllowed; got != tc.refused || !tc.refused && err != nil {
				t.Fatalf("applyTerraform = %v, want refused: %v", err, tc.refused)
			}
			if tc.refused {
				if !strings.Contains(u.Message, "allowTerraform") {
					t.Errorf("message %q does not say what would allow it", u.Message)
				}
				if exists(t, c, &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "x"}}) ||
					exists(t, c, &unstructured.Unstructured{Object: portable.DeepCopy().Object}) {
					t.Error("a refused stack installed something")
				}
			}
		})
	}
}

// TestRemoveCRDs: an owned CRD without custom resources is deleted; one with custom
// resources is kept and marked; another's is left alone.
func TestRemoveCRDs(t *testing.T) {
	ctx := context.Background()
	withCRs := map[string]bool{"gadgets": true}
	list := func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
		if u, ok := l.(*unstructured.UnstructuredList); ok {
			if withCRs[strings.ToLower(u.GetKind()[:len(u.GetKind())-len("List")])+"s"] {
				u.Items = []unstructured.Unstructured{{}}
			}
			return nil
		}
		return c.List(ctx, l, opts...)
	}
	crd := func(plural, owner string) *apiextensionsv1.CustomResourceDefinition {
		c := testCRD(plural, map[string]string{stacksv1.AnnotationOwner: owner})
		c.Spec.Names.ListKind = strings.ToUpper(plural[:1]) + plural[1:len(plural)-1] + "List"
		return c
	}
	c := fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithInterceptorFuncs(interceptor.Funcs{List: list}).
		WithObjects(crd("widgets", owner), crd("gadgets", owner), crd("sprockets", "StackInstall/apps/beta")).Build()
	r := installer(c, events.NewFakeRecorder(10))
	kept, err := r.removeCRDs(ctx, &install{obj: testInstall()}, []string{"widgets.alpha.io", "gadgets.alpha.io", "sprockets.alpha.io", "gone.alpha.io"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"gadgets.alpha.io"}, kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	got := &apiextensionsv1.CustomResourceDefinition{}
	if exists(t, c, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.alpha.io"}}) {
		t.Error("an unused owned CRD is left")
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "gadgets.alpha.io"}, got); err != nil || got.Annotations[stacksv1.AnnotationKeptFrom] != owner || got.Annotations[stacksv1.AnnotationOwner] != "" {
		t.Errorf("a CRD in use: %v, %v; want kept and marked", got.Annotations, err)
	}
	if !exists(t, c, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "sprockets.alpha.io"}}) {
		t.Error("another stack's CRD was deleted")
	}
}

// TestSetDifferences: minus and minusRefs keep a's order and drop what b has; merge adds.
func TestSetDifferences(t *testing.T) {
	if diff := cmp.Diff([]string{"c", "a"}, minus([]string{"c", "b", "a"}, []string{"b", "d"})); diff != "" {
		t.Errorf("minus (-want +got):\n%s", diff)
	}
	if got := minus(nil, []string{"a"}); got != nil {
		t.Errorf("minus(nil) = %v", got)
	}
	a := []stacksv1.ObjectReference{configMapRef("x"), configMapRef("y")}
	if diff := cmp.Diff([]stacksv1.ObjectReference{configMapRef("x")}, minusRefs(a, []stacksv1.ObjectReference{configMapRef("y")})); diff != "" {
		t.Errorf("minusRefs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a": "1", "b": "3"}, merge(map[string]string{"a": "1", "b": "2"}, map[string]string{"b": "3"})); diff != "" {
		t.Errorf("merge (-want +got):\n%s", diff)
	}
	if got := merge(nil, map[string]string{"a": "1"}); got["a"] != "1" {
		t.Errorf("merge(nil) = %v", got)
	}
}
