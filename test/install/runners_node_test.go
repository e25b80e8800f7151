package install

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	"terraplane.io/terraplane/internal/runner"
)

// runnerPodApplies upgrades the release to runner Deployments (the chart's default) and
// checks that a new claim is applied by a runner pod, not the controller: the pool's
// runner pod is Ready in the admin namespace (where the managed resources and their pool
// live), the claim becomes Ready, and the runner's own metrics count the terraform
// commands it ran.
func runnerPodApplies(t *testing.T, g Gomega, ctx context.Context, n *nodeEnv, helm string) {
	n.helm(g, helm, append([]string{"upgrade", "terraplane", chartDir, "-n", adminNS, "--wait", "--timeout", "5m",
		"--set", "runners.mode=deployment", "--set", "runners.resources.limits.cpu=500m", "--set", "runners.resources.limits.memory=1Gi"}, imageValues...)...)
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

}
