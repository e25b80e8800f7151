package e2e

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/test/framework"
)

// setKubeconfig rewrites the credentials Secret of the cluster boundCluster registered as name.
func setKubeconfig(ctx context.Context, ns, name string, kubeconfig []byte) error {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-credentials"}}
	return updateLatest(ctx, s, func() { s.Data = map[string][]byte{"kubeconfig": kubeconfig} })
}

// deadEndpoint is kubeconfig pointed at a port nothing listens on.
func deadEndpoint(kubeconfig []byte) []byte {
	return regexp.MustCompile(`server: \S+`).ReplaceAll(kubeconfig, []byte("server: https://127.0.0.1:1"))
}

// waitClusterReady waits until the KubernetesCluster claim name's Ready is status.
func waitClusterReady(g Gomega, ctx context.Context, ns, name string, status metav1.ConditionStatus) {
	g.Eventually(func(g Gomega) {
		c := &computev1.KubernetesCluster{}
		g.Expect(env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, c)).To(Succeed())
		g.Expect(framework.Condition(c.Status.Conditions, common.TypeReady).Status).To(Equal(status))
	}).WithTimeout(timeout).Should(Succeed())
}

// TestSchedulerLeavesUnusableClusters, on two real API servers: an application placed on
// a cluster whose credentials stop working before it submitted anything there is placed
// again on a usable one; one that submitted something stays; no application is placed on
// a cluster that cannot be reached.
func TestSchedulerLeavesUnusableClusters(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	remote := startRemote(t)
	ns := "e2e-reschedule"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	startWorkloadManager(t)
	self, err := os.ReadFile(env.ControlPlane.Kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	edge := map[string]string{"tier": "edge"}

	By(t, "two usable clusters: a second API server (alpha) and the control plane itself (beta)")
	boundCluster(t, ctx, ns, "alpha", edge, remote.kubeconfig)
	boundCluster(t, ctx, ns, "beta", edge, self)
	g.Expect(env.Namespace(ctx, "web-space")).To(Succeed()) // only beta has it

	By(t, "an application placed on alpha, which lacks its namespace, submits nothing there")
	web := emptyApp(ns, "web", edge)
	web.Spec.ResourceTemplates = []workloadv1.KubernetesApplicationResourceTemplate{
		resourceTemplate("web-config", map[string]string{"app": "web"}, object("v1", "ConfigMap", "web-space", "web-config", map[string]any{"data": map[string]any{"k": "v"}})),
	}
	g.Expect(env.Client.Create(ctx, web)).To(Succeed())
	waitScheduled(g, ctx, web, "alpha") // a tie goes to the first name
	g.Eventually(func(g Gomega) {
		res := getResource(g, ctx, ns, "web-config")
		g.Expect(framework.Condition(res.Status.Conditions, common.TypeReady).Reason).To(Equal("WaitingForNamespace"))
		g.Expect(res.Status.ClusterRef).To(BeNil(), "nothing was written to alpha")
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "alpha's credentials stop working: the application moves to beta and is submitted there")
	g.Expect(setKubeconfig(ctx, ns, "alpha", deadEndpoint(remote.kubeconfig))).To(Succeed())
	waitClusterReady(g, ctx, ns, "alpha", metav1.ConditionFalse)
	waitScheduled(g, ctx, web, "beta")
	g.Eventually(func(g Gomega) {
		g.Expect(getApp(g, ctx, web).Status.State).To(Equal(workloadv1.ApplicationStateSubmitted))
		_, err := remoteObject(ctx, env.Client, "v1", "ConfigMap", "web-space", "web-config")
		g.Expect(err).NotTo(HaveOccurred())
		events, err := env.Events(ctx, web)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(events).To(ContainElement(And(HaveField("Reason", "Rescheduling"),
			HaveField("Message", ContainSubstring("KubernetesCluster e2e-reschedule/alpha is not Ready")))))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "an application that submitted something stays when its cluster turns unusable")
	g.Expect(setKubeconfig(ctx, ns, "beta", deadEndpoint(self))).To(Succeed())
	waitClusterReady(g, ctx, ns, "beta", metav1.ConditionFalse)
	g.Consistently(func(g Gomega) {
		g.Expect(getApp(g, ctx, web).Status.ClusterRef.Name).To(Equal("beta"))
	}).WithTimeout(5 * time.Second).Should(Succeed())

	By(t, "no cluster is usable: a new application is not placed, and says why")
	late := emptyApp(ns, "late", edge)
	g.Expect(env.Client.Create(ctx, late)).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := getApp(g, ctx, late).Status
		g.Expect(st.ClusterRef).To(BeNil())
		g.Expect(framework.Condition(st.Conditions, workloadv1.TypeScheduled).Message).To(ContainSubstring("NoReadyCluster: KubernetesClusters alpha, beta match"))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "beta usable again: the new application is placed there")
	g.Expect(setKubeconfig(ctx, ns, "beta", self)).To(Succeed())
	waitScheduled(g, ctx, late, "beta")

	for _, a := range []*workloadv1.KubernetesApplication{web, late} {
		g.Expect(env.Client.Delete(ctx, a)).To(Succeed())
	}
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(web), web))
	}).WithTimeout(timeout).Should(BeTrue())
}
