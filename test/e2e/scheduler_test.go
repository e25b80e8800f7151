package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

func emptyApp(ns, name string, selector map[string]string) *workloadv1.KubernetesApplication {
	a := &workloadv1.KubernetesApplication{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	a.Spec.ClusterSelector = &metav1.LabelSelector{MatchLabels: selector}
	a.Spec.ResourceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	return a
}

func waitScheduled(g Gomega, ctx context.Context, a *workloadv1.KubernetesApplication, cluster string) {
	g.Eventually(func(g Gomega) {
		st := getApp(g, ctx, a).Status
		g.Expect(st.ClusterRef).NotTo(BeNil(), "%+v", st.Conditions)
		g.Expect(st.ClusterRef.Name).To(Equal(cluster))
		g.Expect(framework.Condition(st.Conditions, workloadv1.TypeScheduled).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())
}

// TestSchedulerPlacement: no matching cluster → Unschedulable with the reason; a cluster
// that becomes Ready is picked up; then the cluster with fewest applications wins, ties
// by name, and non-matching clusters are never chosen.
func TestSchedulerPlacement(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-scheduler"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	startWorkloadManager(t)
	prod := map[string]string{"env": "prod"}

	By(t, "no cluster matches: Unschedulable, saying so")
	first := emptyApp(ns, "first", prod)
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := getApp(g, ctx, first).Status
		sched := framework.Condition(st.Conditions, workloadv1.TypeScheduled)
		g.Expect(sched.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(sched.Reason).To(Equal("Unschedulable"))
		g.Expect(sched.Message).To(ContainSubstring(`NoMatchingCluster: no KubernetesCluster in namespace e2e-scheduler matches clusterSelector "env=prod"`))
		g.Expect(st.State).To(Equal(workloadv1.ApplicationStatePending))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a matching cluster that is not Ready is named")
	notReady := &computev1.KubernetesCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "zeta", Labels: prod}}
	g.Expect(env.Client.Create(ctx, notReady)).To(Succeed())
	g.Eventually(func(g Gomega) {
		sched := framework.Condition(getApp(g, ctx, first).Status.Conditions, workloadv1.TypeScheduled)
		g.Expect(sched.Message).To(ContainSubstring("NoReadyCluster: KubernetesClusters zeta match"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a cluster becoming Ready is picked up; a non-matching one never is")
	self, err := os.ReadFile(env.ControlPlane.Kubeconfig) // every placement target is the control plane itself
	g.Expect(err).NotTo(HaveOccurred())
	boundCluster(t, ctx, ns, "aaa-dev", map[string]string{"env": "dev"}, self)
	boundCluster(t, ctx, ns, "beta", prod, self)
	waitScheduled(g, ctx, first, "beta")
	// The scheduler writes Scheduled; the application controller then submits (nothing, here).
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, ctx, first).Status.State).To(Equal(workloadv1.ApplicationStateSubmitted), "nothing to submit")
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "fewest applications wins, ties by name")
	boundCluster(t, ctx, ns, "alpha", prod, self)
	second := emptyApp(ns, "second", prod)
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	waitScheduled(g, ctx, second, "alpha") // alpha 0, beta 1
	third := emptyApp(ns, "third", prod)
	g.Expect(env.Client.Create(ctx, third)).To(Succeed())
	waitScheduled(g, ctx, third, "alpha") // tie 1-1: alpha before beta
	msg := framework.Condition(getApp(g, ctx, third).Status.Conditions, workloadv1.TypeScheduled).Message
	g.Expect(msg).To(ContainSubstring("fewest applications (1) among 2 ready matching clusters"))
	fourth := emptyApp(ns, "fourth", prod)
	g.Expect(env.Client.Create(ctx, fourth)).To(Succeed())
	waitScheduled(g, ctx, fourth, "beta") // alpha 2, beta 1

	By(t, "a placement is stable: relabelling the cluster does not move the application")
	g.Eventually(func() error {
		beta := &computev1.KubernetesCluster{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "beta"}, beta); err != nil {
			return err
		}
		beta.Labels = map[string]string{"env": "dev"}
		return env.Client.Update(ctx, beta)
	}).WithTimeout(timeout).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(getApp(g, ctx, first).Status.ClusterRef.Name).To(Equal("beta"))
	}).WithTimeout(3 * time.Second).Should(Succeed())

	By(t, "a direct ProviderConfig reference: Unschedulable until the ProviderConfig exists")
	direct := emptyApp(ns, "direct", nil)
	direct.Spec.ClusterSelector = nil
	direct.Spec.ProviderConfigRef = &workloadv1.ProviderConfigReference{Name: "later", Namespace: ns}
	g.Expect(env.Client.Create(ctx, direct)).To(Succeed())
	g.Eventually(func(g Gomega) {
		sched := framework.Condition(getApp(g, ctx, direct).Status.Conditions, workloadv1.TypeScheduled)
		g.Expect(sched.Reason).To(Equal("Unschedulable"))
		g.Expect(sched.Message).To(ContainSubstring("ProviderConfigNotFound: providerconfigs.kubernetes.terraplane.io e2e-scheduler/later named by spec.providerConfigRef does not exist"))
	}).WithTimeout(timeout).Should(Succeed())
	By(t, "... and until its credentials reach the cluster")
	g.Expect(env.Client.Create(ctx, providerConfig(ns, "later", "later-credentials"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		sched := framework.Condition(getApp(g, ctx, direct).Status.Conditions, workloadv1.TypeScheduled)
		g.Expect(sched.Reason).To(Equal("Unschedulable"))
		g.Expect(sched.Message).To(ContainSubstring("ClusterUnusable: providerconfigs.kubernetes.terraplane.io e2e-scheduler/later cannot reach its cluster: CredentialsNotFound"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(env.Client.Create(ctx, kubeconfigSecret(ns, "later-credentials", self))).To(Succeed())
	waitScheduled(g, ctx, direct, "later")
	g.Expect(getApp(g, ctx, direct).Status.ClusterRef.Kind).To(Equal(workloadv1.ClusterKindProviderConfig))

	for _, a := range []*workloadv1.KubernetesApplication{first, second, third, fourth, direct} {
		g.Expect(env.Client.Delete(ctx, a)).To(Succeed())
	}
}
