package install

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/runner"
)

// runnerPodApplies upgrades the release (runner Deployments, its default) to a short idle
// TTL and checks that a new claim is applied by a runner pod, not the controller: the
// pool's runner pod is Ready in the admin namespace (where the managed resources and
// their pool live), the claim becomes Ready, and the runner's own metrics count the
// terraform commands it ran. Idle, the runner is scaled to zero; the next claim scales it
// up again and becomes Ready.
func runnerPodApplies(t *testing.T, g Gomega, ctx context.Context, n *nodeEnv, helm string) {
	n.helm(g, helm, append([]string{"upgrade", "terraplane", chartDir, "-n", adminNS, "--wait", "--timeout", "5m",
		"--set", "runners.idleTTL=40s", "--set", "runners.resources.limits.cpu=500m", "--set", "runners.resources.limits.memory=1Gi"}, imageValues...)...)
	n.controllerPod(g, ctx)
	claim := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "through-runner"}}
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "through-runner-bucket"}
	g.Expect(n.Client.Create(ctx, claim)).To(Succeed())
	defer n.dumpPods(t, adminNS)
	waitReadyIn(g, ctx, n.Client, claim, func() []metav1.Condition { return claim.Status.Conditions })

	var pod corev1.Pod
	g.Eventually(func(g Gomega) {
		pods := &corev1.PodList{}
		g.Expect(n.Client.List(ctx, pods, client.InNamespace(adminNS), client.MatchingLabels{"app.kubernetes.io/name": "terraplane-runner"})).To(Succeed())
		g.Expect(pods.Items).NotTo(BeEmpty(), "a runner pod in %s", adminNS)
		pod = pods.Items[0]
		g.Expect(podReady(&pod)).To(BeTrue(), "runner pod %s Ready", pod.Name)
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	raw, err := n.Clientset.CoreV1().Pods(adminNS).ProxyGet("http", pod.Name, strconv.Itoa(runner.MetricsPort), "/metrics", nil).DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	runs := 0.0
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "terraplane_terraform_processes_total"); ok {
			f, err := strconv.ParseFloat(rest[strings.LastIndex(rest, " ")+1:], 64)
			g.Expect(err).NotTo(HaveOccurred(), line)
			runs += f
		}
	}
	t.Logf("FIGURE runner pod %s ran %v terraform commands", pod.Name, runs)
	g.Expect(runs).To(BeNumerically(">=", 1), "the runner pod ran the claim's terraform")

	By(t, "idle past runners.idleTTL, the runner is scaled to zero; the next claim scales it up again")
	dep := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: adminNS, Name: runner.ServiceAccountName(runner.PoolRef{Namespace: adminNS, Name: runner.DefaultPool})}
	start := time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(n.Client.Get(ctx, key, dep)).To(Succeed())
		g.Expect(dep.Spec.Replicas).To(HaveValue(BeZero()))
		g.Expect(dep.Status.Replicas).To(BeZero())
	}).WithTimeout(5*time.Minute).WithPolling(2*time.Second).Should(Succeed(), "the idle runner is scaled to zero")
	t.Logf("FIGURE runner scaled to zero %s after the claim was Ready", time.Since(start).Round(time.Second))
	again := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "after-scale-to-zero"}}
	again.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "after-scale-to-zero-bucket"}
	start = time.Now()
	g.Expect(n.Client.Create(ctx, again)).To(Succeed())
	waitReadyIn(g, ctx, n.Client, again, func() []metav1.Condition { return again.Status.Conditions })
	t.Logf("FIGURE claim Ready %s after its creation, through a runner scaled up from zero", time.Since(start).Round(time.Second))
	g.Expect(n.Client.Get(ctx, key, dep)).To(Succeed())
	g.Expect(dep.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)), "the run scaled the runner up")
}
