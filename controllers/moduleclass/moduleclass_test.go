package moduleclass

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	apiextv1 "terraplane.io/terraplane/apis/apiextensions/v1alpha1"
	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/internal/module"
	"terraplane.io/terraplane/internal/resource"
)

const (
	mainTF = `variable "name" {}
variable "size" { default = 1 }
output "id" { value = var.name }
`
	randomTF = `terraform {
  required_providers {
    random = { source = "hashicorp/random", version = "~> 3.0" }
  }
}
`
)

func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = terraformv1.AddToScheme(s)
	_ = apiextv1.AddToScheme(s)
	return s
}

// moduleConfigMap holds files as the class's module, in the class's namespace.
func moduleConfigMap(files map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: definitionNamespace, Name: "db-module", UID: "cm-1"}, Data: files}
}

// newClass is a class reading its module from ConfigMap db-module, with forProvider fixed.
func newClass(forProvider string) *terraformv1.ModuleClass {
	c := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: definitionNamespace, Name: "db", Generation: 2}}
	c.SpecTemplate.Source.ConfigMap = &terraformv1.ConfigMapSource{Name: "db-module"}
	if forProvider != "" {
		c.SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: []byte(forProvider)}
	}
	return c
}

func definition(name, classNS, className string, expose, hide []string) *apiextv1.ClaimDefinition {
	d := &apiextv1.ClaimDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
	d.Spec.FromModule = &apiextv1.FromModule{ModuleClassRef: apiextv1.ModuleClassReference{Namespace: classNS, Name: className},
		Expose: expose, Hide: hide}
	return d
}

// mirror is a provider mirror holding hashicorp/random at version.
func mirror(t *testing.T, version string) string {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "registry.terraform.io", "hashicorp", "random", version, "linux_amd64"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checked is what a reconcile left: both conditions, the status and the events.
type checked struct {
	Synced, SyncedReason string
	Ready, ReadyReason   string
	// Stalled is the Stalled condition's reason ("": absent); Reconciling its status.
	Stalled, Reconciling string
	// Observed: status.observedGeneration is the class's generation.
	Observed  bool
	Variables []string
	Outputs   []string
	Read      bool // status.revision is set
	Requeue   time.Duration
	Events    []string
}

func condition(conds []metav1.Condition, typ string) (string, string) {
	if c := meta.FindStatusCondition(conds, typ); c != nil {
		return string(c.Status), c.Reason
	}
	return "", ""
}

// run runs n reconciles of class db over objs, reading modules with loader (nil: a new one), and returns what the last left.
func run(t *testing.T, n int, loader *modsource.Loader, opts []Option, objs ...client.Object) checked {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(scheme()).WithObjects(objs...).WithStatusSubresource(&terraformv1.ModuleClass{}).Build()
	rec := events.NewFakeRecorder(10)
	if loader == nil {
		loader = &modsource.Loader{}
	}
	r := &Reconciler{client: c, loader: loader, events: resource.RecorderFor(rec)}
	for _, o := range opts {
		o(r)
	}
	var res ctrl.Result
	for i := 0; i < n; i++ {
		var err error
		if res, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: definitionNamespace, Name: "db"}}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}
	class := &terraformv1.ModuleClass{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: definitionNamespace, Name: "db"}, class); err != nil {
		t.Fatal(err)
	}
	got := checked{Read: class.Status.Revision != "", Requeue: res.RequeueAfter}
	got.Synced, got.SyncedReason = condition(class.Status.Conditions, common.TypeSynced)
	got.Ready, got.ReadyReason = condition(class.Status.Conditions, common.TypeReady)
	_, got.Stalled = condition(class.Status.Conditions, common.TypeStalled)
	got.Reconciling, _ = condition(class.Status.Conditions, common.TypeReconciling)
	got.Observed = class.Status.ObservedGeneration == class.Generation
	for _, v := range class.Status.Variables {
		got.Variables = append(got.Variables, v.Name)
	}
	for _, o := range class.Status.Outputs {
		got.Outputs = append(got.Outputs, o.Name)
	}
	close(rec.Events)
	for e := range rec.Events {
		got.Events = append(got.Events, strings.Join(strings.Fields(e)[:2], " "))
	}
	return got
}

// TestReconcile: what a reconcile of a class leaves, Reconciling and Stalled as kstatus
// reads them included: a usable class has its generation observed; one that claims
// cannot use, or whose module cannot be read, is Stalled until someone fixes it.
func TestReconcile(t *testing.T) {
	valid := checked{Synced: "True", SyncedReason: ReasonRead, Ready: "True", ReadyReason: ReasonValid,
		Variables: []string{"name", "size"}, Outputs: []string{"id"}, Read: true, Observed: true}
	invalid := func(reason string, requeue time.Duration) checked {
		return checked{Synced: "True", SyncedReason: ReasonRead, Ready: "False", ReadyReason: reason, Stalled: reason, Observed: true,
			Variables: []string{"name", "size"}, Outputs: []string{"id"}, Read: true, Requeue: requeue, Events: []string{"Warning " + reason}}
	}
	unreadable := func(reason string) checked {
		return checked{Synced: "False", SyncedReason: reason, Ready: "False", ReadyReason: reason, Stalled: reason, Observed: true,
			Requeue: retryProblem, Events: []string{"Warning " + reason}}
	}
	stale := newClass(`{"name": "a"}`)
	stale.Status = terraformv1.ModuleClassStatus{Variables: []terraformv1.ModuleVariable{{Name: "old"}}, Revision: "7"}
	wrongOutput := newClass(`{"name": "a"}`)
	wrongOutput.SpecTemplate.Connection = []terraformv1.ConnectionMapping{{FromOutput: "endpoint", ToKey: "endpoint"}}
	cases := map[string]struct {
		objs []client.Object
		opts []Option
		want checked
	}{
		"forProvider supplies the required variable": {
			objs: []client.Object{newClass(`{"name": "a"}`), moduleConfigMap(map[string]string{"main.tf": mainTF})},
			want: valid,
		},
		"a missing ConfigMap clears what the status said of the module": {
			objs: []client.Object{stale},
			want: unreadable(modsource.ReasonNotFound),
		},
		"a module that does not parse is not read": {
			objs: []client.Object{newClass(""), moduleConfigMap(map[string]string{"main.tf": `variable "name" {`})},
			want: unreadable(modsource.ReasonInvalidModule),
		},
		"a required variable nobody supplies": {
			objs: []client.Object{newClass(""), moduleConfigMap(map[string]string{"main.tf": mainTF})},
			want: invalid(ReasonInvalid, 0),
		},
		"a connection key from an output the module lacks": {
			objs: []client.Object{wrongOutput, moduleConfigMap(map[string]string{"main.tf": mainTF})},
			want: invalid(ReasonInvalid, 0),
		},
		"a ClaimDefinition exposing every variable supplies it": {
			objs: []client.Object{newClass(""), moduleConfigMap(map[string]string{"main.tf": mainTF}),
				definition("dbs.example.org", "", "db", nil, nil)},
			want: valid,
		},
		"a ClaimDefinition exposing it by name supplies it": {
			objs: []client.Object{newClass(""), moduleConfigMap(map[string]string{"main.tf": mainTF}),
				definition("dbs.example.org", definitionNamespace, "db", []string{"name"}, nil)},
			want: valid,
		},
		"a ClaimDefinition exposing only other variables does not": {
			objs: []client.Object{newClass(""), moduleConfigMap(map[string]string{"main.tf": mainTF}),
				definition("dbs.example.org", "", "db", []string{"size"}, nil)},
			want: invalid(ReasonInvalid, 0),
		},
		"a ClaimDefinition hiding it does not": {
			objs: []client.Object{newClass(""), moduleConfigMap(map[string]string{"main.tf": mainTF}),
				definition("dbs.example.org", "", "db", nil, []string{"name"})},
			want: invalid(ReasonInvalid, 0),
		},
		"a ClaimDefinition of a class of that name in another namespace does not": {
			objs: []client.Object{newClass(""), moduleConfigMap(map[string]string{"main.tf": mainTF}),
				definition("dbs.example.org", "team-a", "db", nil, nil), definition("caches.example.org", "", "cache", nil, nil)},
			want: invalid(ReasonInvalid, 0),
		},
		"a provider no source offers is looked for again": {
			objs: []client.Object{newClass(`{"name": "a"}`), moduleConfigMap(map[string]string{"main.tf": mainTF, "versions.tf": randomTF})},
			opts: []Option{WithProviderSources(module.ProviderSources{Mirror: mirror(t, "2.0.0")})},
			want: invalid(ReasonProviderUnavailable, retryProblem),
		},
		"a provider in the mirror": {
			objs: []client.Object{newClass(`{"name": "a"}`), moduleConfigMap(map[string]string{"main.tf": mainTF, "versions.tf": randomTF})},
			opts: []Option{WithProviderSources(module.ProviderSources{Mirror: mirror(t, "3.6.0")})},
			want: valid,
		},
		"providers are not checked without sources": {
			objs: []client.Object{newClass(`{"name": "a"}`), moduleConfigMap(map[string]string{"main.tf": mainTF, "versions.tf": randomTF})},
			want: valid,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, run(t, 1, nil, tc.opts, tc.objs...)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestOneEventPerProblem: a class that stays invalid is reported once, not at every reconcile.
func TestOneEventPerProblem(t *testing.T) {
	got := run(t, 3, nil, nil, newClass(""), moduleConfigMap(map[string]string{"main.tf": mainTF}))
	if diff := cmp.Diff([]string{"Warning " + ReasonInvalid}, got.Events); diff != "" {
		t.Errorf("events of three reconciles (-want +got):\n%s", diff)
	}
}

func TestGoneClassIsNoError(t *testing.T) {
	r := &Reconciler{client: fake.NewClientBuilder().WithScheme(scheme()).Build(), loader: &modsource.Loader{}}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "x", Name: "gone"}})
	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("Reconcile of a deleted class = %v, %v; want nothing", res, err)
	}
}

// gitModule commits mainTF to a new repository and returns its URL, branch and commit.
func gitModule(t *testing.T) (url, branch, commit string) {
	dir := t.TempDir()
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(mainTF+randomTF), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	if _, err := wt.Add("main.tf"); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("module", &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	head, _ := repo.Head()
	return "file://" + dir, head.Name().Short(), h.String()
}

// TestMovingSourceIsReadAgain: a class whose module comes from a branch is looked at again
// every refresh period, valid or not, or sooner when a problem asks to.
func TestMovingSourceIsReadAgain(t *testing.T) {
	url, branch, commit := gitModule(t)
	missing := []Option{WithProviderSources(module.ProviderSources{Mirror: t.TempDir()})}
	cases := map[string]struct {
		ref         string
		forProvider string
		refresh     time.Duration
		opts        []Option
		want        time.Duration
	}{
		"valid, on a branch":                            {ref: branch, forProvider: `{"name": "a"}`, refresh: time.Hour, want: time.Hour},
		"valid, at a commit":                            {ref: commit, forProvider: `{"name": "a"}`, refresh: time.Hour, want: 0},
		"invalid, on a branch: a push may fix it":       {ref: branch, refresh: time.Hour, want: time.Hour},
		"invalid, at a commit: only an edit fixes it":   {ref: commit, refresh: time.Hour, want: 0},
		"provider missing, refresh sooner than a retry": {ref: branch, forProvider: `{"name": "a"}`, refresh: 10 * time.Second, opts: missing, want: 10 * time.Second},
		"provider missing, retry sooner than a refresh": {ref: branch, forProvider: `{"name": "a"}`, refresh: time.Hour, opts: missing, want: retryProblem},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			class := newClass(tc.forProvider)
			class.SpecTemplate.Source = terraformv1.ModuleSource{Git: &terraformv1.GitSource{URL: url, Ref: tc.ref}}
			got := run(t, 1, &modsource.Loader{CacheDir: t.TempDir(), RefreshInterval: tc.refresh, AllowInsecure: true}, tc.opts, class)
			if !got.Read || got.Requeue != tc.want {
				t.Errorf("read %v, requeue %v; want read, requeue %v (%+v)", got.Read, got.Requeue, tc.want, got)
			}
		})
	}
}
