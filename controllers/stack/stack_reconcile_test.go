package stack

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	stacksv1 "terraplane.io/terraplane/apis/stacks/v1alpha1"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/resource"
)

// stackClient is a fake client with Terraplane's scheme holding objs, Stacks and installs
// with a status subresource.
func stackClient(objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithScheme(kinds.NewScheme()).WithObjects(objs...).
		WithStatusSubresource(&stacksv1.Stack{}, &stacksv1.StackInstall{}, &stacksv1.ClusterStackInstall{}).Build()
}

// testStack is a Stack in ns "apps" owning widgets.alpha.io, with a controller Deployment.
func testStack(scope stacksv1.PermissionScope) *stacksv1.Stack {
	s := &stacksv1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha", UID: "stack-uid", Generation: 1}}
	s.Spec.PermissionScope = scope
	s.Spec.CRDs.Owned = stacksv1.CRDList{"widgets.alpha.io/v1"}
	labels := map[string]string{"app": "alpha"}
	s.Spec.Controller.Deployment = &stacksv1.ControllerDeployment{Name: "alpha-controller", Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "alpha:v1", Env: []corev1.EnvVar{{Name: "POD_NAME", Value: "x"}}}}}},
	}}
	return s
}

// exists reports whether obj (by key) is in c.
func exists(t *testing.T, c client.Client, obj client.Object) bool {
	t.Helper()
	err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// TestStackReconcile: a Stack gets its ServiceAccount, RBAC of its permission scope (the
// other scope's removed) and its controller Deployment running as that account with
// POD_NAME and POD_NAMESPACE from the downward API; Ready says whether there is a controller.
func TestStackReconcile(t *testing.T) {
	for _, scope := range []stacksv1.PermissionScope{stacksv1.PermissionScopeNamespaced, stacksv1.PermissionScopeCluster} {
		t.Run(string(scope), func(t *testing.T) {
			ctx := context.Background()
			s := testStack(scope)
			staleRole := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha"}}
			staleCR := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusterName(s)}}
			c := stackClient(s, staleRole, staleCR)
			r := &StackReconciler{client: c, recorder: resource.RecorderFor(events.NewFakeRecorder(10))}
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)}); err != nil {
				t.Fatal(err)
			}
			if !exists(t, c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha"}}) {
				t.Error("no ServiceAccount")
			}
			cluster := scope == stacksv1.PermissionScopeCluster
			for obj, want := range map[client.Object]bool{
				&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha"}}:        !cluster,
				&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha"}}: !cluster,
				&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusterName(s)}}:             cluster,
				&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusterName(s)}}:      cluster,
			} {
				if got := exists(t, c, obj); got != want {
					t.Errorf("%T %s exists: %v, want %v", obj, obj.GetName(), got, want)
				}
			}
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha-controller"}}
			if !exists(t, c, d) {
				t.Fatal("no Deployment")
			}
			pod := d.Spec.Template.Spec
			if pod.ServiceAccountName != "alpha" || pod.Containers[0].Env[0].ValueFrom == nil || !metav1.IsControlledBy(d, s) || d.Labels[stacksv1.LabelStack] != "alpha" {
				t.Errorf("deployment: account %q, env %+v, owners %v, labels %v", pod.ServiceAccountName, pod.Containers[0].Env, d.OwnerReferences, d.Labels)
			}
			got := &stacksv1.Stack{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
				t.Fatal(err)
			}
			ready := meta.FindStatusCondition(got.Status.Conditions, common.TypeReady)
			if ready == nil || ready.Reason != stacksv1.ReasonControllerDeployed || got.Status.ServiceAccount != "alpha" || len(got.Finalizers) != 1 {
				t.Errorf("status %+v, finalizers %v", got.Status, got.Finalizers)
			}
		})
	}
}

// TestStackReconcileRefuses: a Stack whose CRDs do not read as plural.group/version, or
// that depends on a reserved group (Terraplane's or Kubernetes' own), is InvalidStack,
// with no RBAC made.
func TestStackReconcileRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		scope     stacksv1.PermissionScope
		dependsOn stacksv1.CRDList
	}{
		"not plural.group/version": {stacksv1.PermissionScopeNamespaced, stacksv1.CRDList{"widgets"}},
		"every terraform kind":     {stacksv1.PermissionScopeNamespaced, stacksv1.CRDList{"*.terraform.terraplane.io/v1alpha1"}},
		"Modules, cluster-wide":    {stacksv1.PermissionScopeCluster, stacksv1.CRDList{"modules.terraform.terraplane.io/v1alpha1"}},
		"RBAC, cluster-wide":       {stacksv1.PermissionScopeCluster, stacksv1.CRDList{"*.rbac.authorization.k8s.io/v1"}},
		"Deployments":              {stacksv1.PermissionScopeNamespaced, stacksv1.CRDList{"deployments.apps/v1"}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := testStack(tc.scope)
			s.Spec.CRDs.DependsOn = tc.dependsOn
			c := stackClient(s)
			r := &StackReconciler{client: c, recorder: resource.RecorderFor(events.NewFakeRecorder(10))}
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)}); err != nil {
				t.Fatal(err)
			}
			got := &stacksv1.Stack{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(s), got); err != nil {
				t.Fatal(err)
			}
			if synced := meta.FindStatusCondition(got.Status.Conditions, common.TypeSynced); synced == nil || synced.Reason != stacksv1.ReasonInvalidStack {
				t.Errorf("Synced %+v, want %s", synced, stacksv1.ReasonInvalidStack)
			}
			for _, o := range []client.Object{&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha"}},
				&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusterName(s)}}} {
				if exists(t, c, o) {
					t.Errorf("a %T was made for an invalid Stack", o)
				}
			}
		})
	}
}

// TestPruneDeployments: a controller the Stack no longer names is deleted; one it does
// not control, or the one it names, stays.
func TestPruneDeployments(t *testing.T) {
	ctx := context.Background()
	s := testStack(stacksv1.PermissionScopeNamespaced)
	yes := true
	owned := func(name string, controlled bool) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: name, Labels: map[string]string{stacksv1.LabelStack: "alpha"}}}
		if controlled {
			d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "stacks.terraplane.io/v1alpha1", Kind: "Stack", Name: "alpha", UID: s.UID, Controller: &yes}}
		}
		return d
	}
	cases := map[string]struct {
		spec *stacksv1.ControllerDeployment
		want map[string]bool
	}{
		"renamed":       {s.Spec.Controller.Deployment, map[string]bool{"alpha-controller": true, "old": false, "foreign": true}},
		"no controller": {nil, map[string]bool{"alpha-controller": false, "old": false, "foreign": true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := s.DeepCopy()
			s.Spec.Controller.Deployment = tc.spec
			c := stackClient(s, owned("alpha-controller", true), owned("old", true), owned("foreign", false))
			r := &StackReconciler{client: c}
			if err := r.pruneDeployments(ctx, s); err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for n := range tc.want {
				got[n] = exists(t, c, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: n}})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("deployments (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTeardown: a deleted Stack's controller, RBAC and ServiceAccount are deleted before
// it goes; those already gone are no error.
func TestTeardown(t *testing.T) {
	ctx := context.Background()
	s := testStack(stacksv1.PermissionScopeNamespaced)
	s.Finalizers = []string{Finalizer}
	now := metav1.Now()
	s.DeletionTimestamp = &now
	r0 := &StackReconciler{}
	objs := append([]client.Object{s}, r0.owned(s)[:3]...) // the Deployment, the ClusterRoleBinding and the ClusterRole
	c := stackClient(objs...)
	r := &StackReconciler{client: c, recorder: resource.RecorderFor(events.NewFakeRecorder(10))}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)}); err != nil {
		t.Fatal(err)
	}
	for _, obj := range r0.owned(testStack(stacksv1.PermissionScopeNamespaced)) {
		if exists(t, c, obj) {
			t.Errorf("%T %s is left", obj, obj.GetName())
		}
	}
	if exists(t, c, &stacksv1.Stack{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "alpha"}}) {
		t.Error("the Stack is left")
	}
}

// TestOwned: every object a Stack may have made, its Deployment first when it has one.
func TestOwned(t *testing.T) {
	s := testStack(stacksv1.PermissionScopeCluster)
	var got []string
	for _, o := range (&StackReconciler{}).owned(s) {
		got = append(got, o.GetNamespace()+"/"+o.GetName())
	}
	want := []string{"apps/alpha-controller", "/stacks.terraplane.io:apps:alpha", "/stacks.terraplane.io:apps:alpha", "apps/alpha", "apps/alpha", "apps/alpha"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("owned (-want +got):\n%s", diff)
	}
	s.Spec.Controller.Deployment = nil
	if n := len((&StackReconciler{}).owned(s)); n != 5 {
		t.Errorf("without a controller: %d objects, want 5", n)
	}
}
