package tenancy

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/runner"
)

// TestRunnerDeployments: with runners.mode=deployment, the controller, holding only the
// chart's roles, makes a pool's runner in a namespace it serves, one that enforces the
// restricted Pod Security level: its ServiceAccount bound to terraplane-runner (no bind
// right needed: the controller holds what it grants there), its credentials, Service and
// Deployment, whose pod is admitted. It waits for the Deployment to be ready, and can
// make nothing in a namespace it does not serve.
func TestRunnerDeployments(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const release, ns, served, unserved = "pools", "tenancy-pools-system", "tenancy-pools-team", "tenancy-pools-other"
	for _, n := range []string{ns, unserved} {
		g.Expect(env.Namespace(ctx, n)).To(Succeed())
	}
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: served,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}))).To(Succeed())
	applyRBAC(g, ctx, ns, renderChart(t, g, release, "-n", ns, "--set=runners.mode=deployment", "--set=tenancy.namespaces={"+served+"}"))
	controller, err := client.New(as(serviceAccount(ns, "pools-terraplane")), client.Options{Scheme: kinds.NewScheme()})
	g.Expect(err).NotTo(HaveOccurred())
	deps := &runner.Deployments{Client: controller, Identities: &runner.Identities{Client: controller, EnsureRole: true},
		Pod: runner.PodSpec{Image: "registry.example.com/terraplane:v1", Terraform: "/usr/local/bin/terraform"}, ReadyTimeout: time.Second}
	pool := runner.PoolRef{Namespace: served, Name: "blue"}
	name := runner.ServiceAccountName(pool)

	By(t, "the controller makes the pool's runner with its own roles")
	creds, err := deps.Ensure(ctx, pool)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(creds).To(HaveKey(runner.TokenKey))
	key := client.ObjectKey{Namespace: served, Name: name}
	binding := &rbacv1.RoleBinding{}
	g.Expect(env.Client.Get(ctx, key, binding)).To(Succeed())
	g.Expect(binding.RoleRef.Name).To(Equal(runner.RunnerClusterRole))
	g.Expect(env.Client.Get(ctx, key, &corev1.ServiceAccount{})).To(Succeed())
	g.Expect(env.Client.Get(ctx, key, &corev1.Service{})).To(Succeed())
	dep := &appsv1.Deployment{}
	g.Expect(env.Client.Get(ctx, key, dep)).To(Succeed())
	g.Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal(name))

	By(t, "its pod is admitted where the restricted Pod Security level is enforced")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: served, Name: "runner-admission", Labels: dep.Spec.Template.Labels},
		Spec: dep.Spec.Template.Spec}
	g.Expect(env.Client.Create(ctx, pod, client.DryRunAll)).To(Succeed())

	By(t, "made again, nothing changes; until a replica is ready there is no client")
	again, err := deps.Ensure(ctx, pool)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again[runner.TokenKey]).To(Equal(creds[runner.TokenKey]), "the credentials are kept")
	_, err = deps.Launch(ctx, pool)
	g.Expect(err).To(MatchError(ContainSubstring("not ready yet")))

	By(t, "the pool's ServiceAccount reaches its namespace's Secrets and nothing else")
	sa := serviceAccount(served, name)
	expectAccess(g, ctx, "the pool", sa, []access{{"get", "", "secrets", served}, {"update", "coordination.k8s.io", "leases", served}},
		[]access{{"get", "", "secrets", ns}, {"get", "", "secrets", unserved}, {"create", "apps", "deployments", served}})

	By(t, "everything made for the pool is owned by the terraplane-runner ClusterRole, which the controller may read")
	anchor := &rbacv1.ClusterRole{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: runner.RunnerClusterRole}, anchor)).To(Succeed())
	for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.RoleBinding{}, &corev1.Secret{}, &corev1.Service{}, &appsv1.Deployment{}} {
		g.Expect(env.Client.Get(ctx, key, obj)).To(Succeed())
		g.Expect(obj.GetOwnerReferences()).To(ContainElement(HaveField("UID", anchor.UID)), "%T owned by the anchor", obj)
	}

	By(t, "the controller lists the runner Deployments where it serves, to scale idle ones to zero")
	deps.IdleTTL, deps.Namespaces = time.Minute, []string{served}
	scaled, err := deps.ReapOnce(ctx, time.Now().Add(time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(scaled).To(ConsistOf(pool))
	g.Expect(env.Client.Get(ctx, key, dep)).To(Succeed())
	g.Expect(dep.Spec.Replicas).To(HaveValue(BeZero()))

	By(t, "in a namespace it does not serve, the controller makes nothing")
	_, err = deps.Ensure(ctx, runner.PoolRef{Namespace: unserved, Name: "default"})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
	deps.Namespaces = []string{unserved}
	_, err = deps.ReapOnce(ctx, time.Now())
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
}
