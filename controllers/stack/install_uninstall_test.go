package stack

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
)

// deletedInstall is the install being deleted, having installed a module ConfigMap.
func deletedInstall() *stacksv1.StackInstall {
	obj := testInstall()
	obj.Finalizers = []string{Finalizer}
	now := metav1.Now()
	obj.DeletionTimestamp = &now
	obj.Status.InstalledObjects = []stacksv1.ObjectReference{configMapRef("net")}
	return obj
}

// TestUninstall: deleting an install first deletes its Stack and waits until it is gone,
// then removes what it installed, and only then lets the install go; a Stack someone
// else owns does not hold it up.
func TestUninstall(t *testing.T) {
	ownedStack := func(by string) *stacksv1.Stack {
		return &stacksv1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha", Annotations: map[string]string{stacksv1.AnnotationOwner: by}}}
	}
	module := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "net", Annotations: map[string]string{stacksv1.AnnotationOwner: owner}}}
	cases := map[string]struct {
		stack     *stacksv1.Stack
		wantGone  bool // the install, and its module
		wantStack bool
	}{
		"its Stack is still there":  {ownedStack(owner), false, false},
		"its Stack is gone":         {nil, true, false},
		"a Stack of someone else's": {ownedStack("StackInstall/apps/other"), true, true},
	}
	for caseName, tc := range cases {
		t.Run(caseName, func(t *testing.T) {
			ctx := context.Background()
			objs := []client.Object{deletedInstall(), module.DeepCopy()}
			if tc.stack != nil {
				objs = append(objs, tc.stack)
			}
			c := stackClient(objs...)
			r := installer(c, events.NewFakeRecorder(10))
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "apps", Name: "alpha"}}); err != nil {
				t.Fatal(err)
			}
			if got := !exists(t, c, &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha"}}); got != tc.wantGone {
				t.Errorf("install gone: %v, want %v", got, tc.wantGone)
			}
			if got := !exists(t, c, module.DeepCopy()); got != tc.wantGone {
				t.Errorf("module gone: %v, want %v", got, tc.wantGone)
			}
			if got := exists(t, c, &stacksv1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha"}}); got != tc.wantStack {
				t.Errorf("Stack left: %v, want %v", got, tc.wantStack)
			}
		})
	}
}

// TestForPullSecret: a Secret wakes the installs that pull with it, in its namespace.
func TestForPullSecret(t *testing.T) {
	install := func(ns, name, secret string) *stacksv1.StackInstall {
		return &stacksv1.StackInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: stacksv1.StackInstallSpec{PullSecretName: secret}}
	}
	c := stackClient(install("apps", "a", "creds"), install("apps", "b", "other"), install("team", "c", "creds"), install("apps", "d", "creds"))
	r := installer(c, events.NewFakeRecorder(1))
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "creds"}}
	var got []string
	for _, req := range r.forPullSecret(func() client.ObjectList { return &stacksv1.StackInstallList{} })(context.Background(), secret) {
		got = append(got, req.String())
	}
	if diff := cmp.Diff([]string{"apps/a", "apps/d"}, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestUpgradeIsTold: an install whose package moved to a new digest says so once the
// upgrade completes, naming both.
func TestUpgradeIsTold(t *testing.T) {
	ctx := context.Background()
	obj := testInstall()
	obj.Status.InstalledPackage, obj.Status.ResolvedPackage = "reg.io/stacks/a@sha256:old", "reg.io/stacks/a@sha256:new"
	c := stackClient(obj)
	rec := events.NewFakeRecorder(10)
	r := installer(c, rec)
	got := &stacksv1.StackInstall{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	ref, _ := name.ParseReference("reg.io/stacks/a:v2")
	if _, err := r.finish(ctx, &install{obj: got, orig: got.DeepCopy(), ref: ref}, nil); err != nil {
		t.Fatal(err)
	}
	var upgraded string
	for len(rec.Events) > 0 {
		if e := <-rec.Events; strings.Contains(e, stacksv1.ReasonUpgraded) {
			upgraded = e
		}
	}
	if !strings.Contains(upgraded, "sha256:new") || !strings.Contains(upgraded, "was reg.io/stacks/a@sha256:old") {
		t.Errorf("upgrade event %q", upgraded)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil || got.Status.InstalledPackage != "reg.io/stacks/a@sha256:new" {
		t.Errorf("installedPackage %q, %v", got.Status.InstalledPackage, err)
	}
}
