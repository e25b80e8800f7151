package stack

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/stackpkg"
)

// TestSetPhases: the phases before the failed one succeeded, the failed one says why
// (Unknown while it waits), the later ones are pending; with no failure all succeeded.
func TestSetPhases(t *testing.T) {
	phases := (&InstallReconciler{}).phases()
	type state struct{ Status, Reason string }
	cases := map[string]struct {
		failed string
		err    error
		want   []state
	}{
		"all done": {"", nil, []state{{"True", stacksv1.ReasonSucceeded}, {"True", stacksv1.ReasonSucceeded}, {"True", stacksv1.ReasonSucceeded}, {"True", stacksv1.ReasonSucceeded}, {"True", stacksv1.ReasonSucceeded}}},
		"unpack refused": {stacksv1.TypeUnpacked, resource.UserErrorf(stacksv1.ReasonUnsafePackage, "no"),
			[]state{{"True", stacksv1.ReasonSucceeded}, {"False", stacksv1.ReasonUnsafePackage}, {"Unknown", stacksv1.ReasonPending}, {"Unknown", stacksv1.ReasonPending}, {"Unknown", stacksv1.ReasonPending}}},
		"waiting for dependencies": {stacksv1.TypeDependenciesReady, resource.Waitf(stacksv1.ReasonWaitingForDependencies, "wait"),
			[]state{{"True", stacksv1.ReasonSucceeded}, {"True", stacksv1.ReasonSucceeded}, {"Unknown", stacksv1.ReasonWaitingForDependencies}, {"Unknown", stacksv1.ReasonPending}, {"Unknown", stacksv1.ReasonPending}}},
		"apply failed": {stacksv1.TypeInstalled, errors.New("boom"),
			[]state{{"True", stacksv1.ReasonSucceeded}, {"True", stacksv1.ReasonSucceeded}, {"True", stacksv1.ReasonSucceeded}, {"False", stacksv1.ReasonReconcileError}, {"Unknown", stacksv1.ReasonPending}}},
	}
	for caseName, tc := range cases {
		t.Run(caseName, func(t *testing.T) {
			st := &stacksv1.StackInstallStatus{}
			setPhases(st, 3, phases, tc.failed, resource.Classify(tc.err, resource.Retries{}), tc.err)
			var got []state
			for _, p := range phases {
				c := meta.FindStatusCondition(st.Conditions, p.cond)
				got = append(got, state{string(c.Status), c.Reason})
				if c.ObservedGeneration != 3 {
					t.Errorf("%s: generation %d", p.cond, c.ObservedGeneration)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("phases (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFollowsTag: only an install that names its package by tag looks it up again.
func TestFollowsTag(t *testing.T) {
	tag, _ := name.ParseReference("reg.io/stacks/a:v1")
	digest, _ := name.ParseReference("reg.io/stacks/a@sha256:" + strings.Repeat("ab", 32))
	cases := map[string]struct {
		ref     name.Reference
		crd     string
		refresh time.Duration
		want    bool
	}{
		"a tag":              {tag, "", time.Minute, true},
		"a digest":           {digest, "", time.Minute, false},
		"by CRD":             {tag, "widgets.alpha.io/v1", time.Minute, false},
		"refresh turned off": {tag, "", -1, false},
	}
	for caseName, tc := range cases {
		obj := testInstall()
		obj.Spec.CRD = tc.crd
		r := &InstallReconciler{opts: Options{TagRefresh: tc.refresh}}
		if got := r.followsTag(&install{obj: obj, ref: tc.ref}); got != tc.want {
			t.Errorf("%s: followsTag = %v, want %v", caseName, got, tc.want)
		}
	}
}

// TestInstallReconcile: an install runs its phases: the package's CRDs and Stack are
// written, it waits for the Stack's controller, and says so in its conditions; once the
// Stack is Ready it is Installed (Reconciling until then, as kstatus reads it), told
// once, and looked at again after TagRefresh.
func TestInstallReconcile(t *testing.T) {
	host := testRegistry(t)
	ctx := context.Background()
	obj := testInstall()
	obj.Spec = stacksv1.StackInstallSpec{Source: host, Package: "stacks/plain:v1"}
	c := stackClient(obj)
	rec := events.NewFakeRecorder(10)
	r := installer(c, rec)
	r.packages, r.opts.TagRefresh = &packageCache{limits: stackpkg.DefaultLimits}, time.Hour
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(obj)}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	got := &stacksv1.StackInstall{}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, stacksv1.TypeControllerReady); c == nil || c.Reason != stacksv1.ReasonWaitingForStack || !meta.IsStatusConditionTrue(got.Status.Conditions, stacksv1.TypeInstalled) {
		t.Fatalf("conditions %+v; want Installed and waiting for the Stack", got.Status.Conditions)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, common.TypeReconciling) || got.Status.ObservedGeneration == got.Generation {
		t.Errorf("status %+v; want Reconciling while it waits, its generation not observed yet", got.Status)
	}
	if diff := cmp.Diff([]string{"widgets.alpha.io"}, got.Status.InstalledCRDs); diff != "" || got.Status.InstalledPackage != "" {
		t.Errorf("installed package %q; CRDs (-want +got):\n%s", got.Status.InstalledPackage, diff)
	}
	if !exists(t, c, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.alpha.io"}}) {
		t.Error("the CRD was not written")
	}
	s := &stacksv1.Stack{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "alpha"}, s); err != nil || s.Annotations[stacksv1.AnnotationOwner] != owner || s.Spec.Title != "Plain" {
		t.Fatalf("Stack %+v, %v", s, err)
	}
	s.Status.Conditions = []metav1.Condition{{Type: common.TypeReady, Status: metav1.ConditionTrue, Reason: "ControllerDeployed", ObservedGeneration: s.Generation, LastTransitionTime: metav1.Now()}}
	if err := c.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	for len(rec.Events) > 0 {
		<-rec.Events
	}
	res, err := r.Reconcile(ctx, req)
	if err != nil || res.RequeueAfter != time.Hour {
		t.Fatalf("Reconcile = %+v, %v; want a look again after TagRefresh", res, err)
	}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, common.TypeReady) || got.Status.InstalledPackage != got.Status.ResolvedPackage || got.Status.StackRef == nil {
		t.Errorf("status %+v; want Ready, installed", got.Status)
	}
	if meta.FindStatusCondition(got.Status.Conditions, common.TypeReconciling) != nil || got.Status.ObservedGeneration != got.Generation {
		t.Errorf("status %+v; want its generation observed, not Reconciling", got.Status)
	}
	if len(rec.Events) != 1 || !strings.Contains(<-rec.Events, stacksv1.ReasonInstalled) {
		t.Error("the install is not told once")
	}
}
