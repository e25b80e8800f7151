package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	computev1 "terraplane.io/terraplane/apis/compute/v1alpha1"
	scalingv1 "terraplane.io/terraplane/apis/scaling/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	workloadv1 "terraplane.io/terraplane/apis/workload/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
)

// autoscaledPool is a pool of KubernetesClusters of class "local" (the demo cloud's real
// API servers), labelled pool=<name>, two applications per cluster, none kept idle.
func autoscaledPool(ns, name string, idle time.Duration) *scalingv1.ResourcePool {
	return &scalingv1.ResourcePool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: scalingv1.ResourcePoolSpec{ClaimTemplate: scalingv1.ClaimTemplate{
			APIVersion: computev1.GroupVersion.String(), Kind: "KubernetesCluster", Labels: map[string]string{"pool": name},
			Spec: &apiextensionsv1.JSON{Raw: []byte(`{"classRef":{"name":"local"}}`)}},
			Autoscale: &scalingv1.Autoscale{ApplicationsPerCluster: 2, Min: 0, Max: 3, ScaleDownAfter: &metav1.Duration{Duration: idle}}}}
}

// deploymentApp is an application of one Deployment (in the target's default namespace,
// named as the application) for clusters labelled pool=<pool>.
func deploymentApp(ns, name, pool string) *workloadv1.KubernetesApplication {
	a := emptyApp(ns, name, map[string]string{"pool": pool})
	deploy := object("apps/v1", "Deployment", "default", name, map[string]any{"spec": map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27"}}}}}})
	a.Spec.ResourceTemplates = []workloadv1.KubernetesApplicationResourceTemplate{resourceTemplate(name+"-deployment", map[string]string{"app": name}, deploy)}
	return a
}

// clusterProcesses are the etcd and kube-apiserver of one demo cluster.
type clusterProcesses struct {
	dir  string
	pids []int
	port string
}

// demoCluster reads where a member's processes run: its Module's data_dir output
// (dataDir in status.atProvider), the pids there, and the API server's port from its
// endpoint.
func demoCluster(g Gomega, ctx context.Context, claim *computev1.KubernetesCluster) clusterProcesses {
	ref := claim.Spec.ResourceRef
	g.Expect(ref).NotTo(BeNil())
	mod := &terraformv1.Module{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, mod)).To(Succeed())
	g.Expect(mod.Status.AtProvider).NotTo(BeNil())
	var out struct {
		DataDir  string `json:"dataDir"`
		Endpoint string `json:"endpoint"`
	}
	g.Expect(json.Unmarshal(mod.Status.AtProvider.Raw, &out)).To(Succeed())
	p := clusterProcesses{dir: out.DataDir}
	_, p.port, _ = net.SplitHostPort(strings.TrimPrefix(out.Endpoint, "https://"))
	for _, name := range []string{"etcd", "kube-apiserver"} {
		b, err := os.ReadFile(filepath.Join(out.DataDir, name+".pid"))
		g.Expect(err).NotTo(HaveOccurred())
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		g.Expect(err).NotTo(HaveOccurred())
		p.pids = append(p.pids, pid)
	}
	return p
}

// alive reports whether pid runs a process started from dir (a reused pid does not count).
func alive(pid int, dir string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(b), dir)
}

// listening reports whether something accepts connections on 127.0.0.1:port.
func listening(port string) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
	if err == nil {
		_ = c.Close()
	}
	return err == nil
}

// killClusters stops any demo cluster process left under stateDir (a failed test).
func killClusters(stateDir string) {
	pids, _ := filepath.Glob(filepath.Join(stateDir, "*", "*.pid"))
	for _, f := range pids {
		b, err := os.ReadFile(f)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && alive(pid, filepath.Dir(f)) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// targetClient is a client of the cluster whose kubeconfig a member's connection Secret holds.
func targetClient(g Gomega, ctx context.Context, ns, secret string) client.Client {
	s := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: secret}, s)).To(Succeed())
	cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data["kubeconfig"])
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	return c
}

// clusterMembers lists an autoscaled pool's members.
func clusterMembers(g Gomega, ctx context.Context, ns, pool string) []computev1.KubernetesCluster {
	list := &computev1.KubernetesClusterList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{common.PoolLabel: pool})).To(Succeed())
	return list.Items
}

// placedOn waits until app is scheduled on a member, its Deployment is in that cluster,
// and returns the member's name.
func placedOn(g Gomega, ctx context.Context, a *workloadv1.KubernetesApplication) string {
	var cluster string
	g.Eventually(func(g Gomega) {
		st := getApp(g, ctx, a).Status
		g.Expect(st.ClusterRef).NotTo(BeNil(), "%+v", st.Conditions)
		g.Expect(st.State).To(Equal(workloadv1.ApplicationStateSubmitted), "%+v", st.Conditions)
		cluster = st.ClusterRef.Name
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	_, err := remoteObject(ctx, targetClient(g, ctx, a.Namespace, cluster), "apps/v1", "Deployment", "default", a.Name)
	g.Expect(err).NotTo(HaveOccurred(), "Deployment %s on %s", a.Name, cluster)
	return cluster
}

// TestAutoscaleClusters: an application no cluster matches makes an autoscaled pool
// grow by one real cluster (an etcd and a kube-apiserver made by terraform), where the
// application's Deployment is then applied; a second application shares it
// (applicationsPerCluster 2); a third makes the pool grow again. Once the applications
// are deleted and scaleDownAfter has passed, the pool is back to min (0), each cluster's
// workspace destroyed and its processes gone.
func TestAutoscaleClusters(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const ns, poolName = "e2e-autoscale", "grow"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	stateDir := filepath.Join(t.TempDir(), "clusters")
	t.Cleanup(func() { killClusters(stateDir) })
	objs, err := devenv.DemoClusterObjects(devenv.DemoClusterOptions{AdminNamespace: adminNS, AppNamespace: ns, Class: "local", StateDir: stateDir})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(devenv.ApplyObjects(ctx, env.Client, objs)).To(Succeed()) // as terraplane dev does
	port, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	mgr, err := env.StartManager(t.TempDir(), app.Options{MetricsAddr: fmt.Sprintf("127.0.0.1:%d", port), MetricsSecure: false})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	pool := autoscaledPool(ns, poolName, 3*time.Second)
	g.Expect(env.Client.Create(ctx, pool)).To(Succeed())

	By(t, "an application no cluster matches: Unschedulable, naming the pool, which grows by one")
	start := time.Now()
	first := deploymentApp(ns, "first", poolName)
	g.Expect(env.Client.Create(ctx, first)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(clusterMembers(g, ctx, ns, poolName)).To(HaveLen(1))
		sched := framework.Condition(getApp(g, ctx, first).Status.Conditions, workloadv1.TypeScheduled)
		g.Expect(sched.Reason).To(Equal("Unschedulable"))
		g.Expect(sched.Message).To(ContainSubstring("ResourcePool " + poolName + " is growing for it"))
		g.Expect(eventsWith(g, ctx, first, "ClusterAdded")).To(HaveLen(1))
		g.Expect(eventsWith(g, ctx, pool, "ScaledUp")).To(HaveLen(1))
	}).WithTimeout(timeout).Should(Succeed())
	c1 := placedOn(g, ctx, first)
	t.Logf("first application placed on a new cluster %s after %s", c1, time.Since(start).Round(100*time.Millisecond))
	member := &computev1.KubernetesCluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: c1}, member)).To(Succeed())
	g.Expect(member.Labels).To(HaveKeyWithValue(common.PoolLabel, poolName))
	p1 := demoCluster(g, ctx, member)

	By(t, "a second application shares the cluster: applicationsPerCluster is 2")
	second := deploymentApp(ns, "second", poolName)
	g.Expect(env.Client.Create(ctx, second)).To(Succeed())
	g.Expect(placedOn(g, ctx, second)).To(Equal(c1))
	g.Expect(clusterMembers(g, ctx, ns, poolName)).To(HaveLen(1), "pool events: %q", eventsWith(g, ctx, pool, "ScaledUp"))
	g.Expect(eventsWith(g, ctx, second, "ClusterAdded")).To(BeEmpty(), "a cluster with room takes it")

	By(t, "a third makes the pool grow again, and lands on the new cluster")
	start = time.Now()
	third := deploymentApp(ns, "third", poolName)
	g.Expect(env.Client.Create(ctx, third)).To(Succeed())
	g.Eventually(func(g Gomega) {
		sched := framework.Condition(getApp(g, ctx, third).Status.Conditions, workloadv1.TypeScheduled)
		g.Expect(sched.Message).To(ContainSubstring("ClustersFull"))
	}).WithTimeout(timeout).Should(Succeed())
	c2 := placedOn(g, ctx, third)
	t.Logf("third application placed on a new cluster %s after %s", c2, time.Since(start).Round(100*time.Millisecond))
	g.Expect(c2).NotTo(Equal(c1))
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: c2}, member)).To(Succeed())
	p2 := demoCluster(g, ctx, member)
	g.Expect(clusterMembers(g, ctx, ns, poolName)).To(HaveLen(2))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
	g.Expect(pool.Status.Clusters).To(ConsistOf(
		scalingv1.ClusterMember{Name: c1, Applications: 2, Ready: true}, scalingv1.ClusterMember{Name: c2, Applications: 1, Ready: true}))
	for _, p := range []clusterProcesses{p1, p2} {
		for _, pid := range p.pids {
			g.Expect(alive(pid, p.dir)).To(BeTrue(), "pid %d of %s", pid, p.dir)
		}
		g.Expect(listening(p.port)).To(BeTrue())
	}

	By(t, "the applications deleted: after scaleDownAfter the pool shrinks to min, and the clusters' processes are gone")
	for _, a := range []*workloadv1.KubernetesApplication{first, second, third} {
		g.Expect(env.Client.Delete(ctx, a)).To(Succeed())
	}
	start = time.Now()
	g.Eventually(func(g Gomega) {
		g.Expect(clusterMembers(g, ctx, ns, poolName)).To(BeEmpty())
		for _, name := range []string{c1, c2} {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &computev1.KubernetesCluster{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "claim %s: %v", name, err)
		}
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	t.Logf("pool back to 0 members after %s", time.Since(start).Round(100*time.Millisecond))
	for _, p := range []clusterProcesses{p1, p2} {
		for _, pid := range p.pids {
			g.Expect(alive(pid, p.dir)).To(BeFalse(), "pid %d of %s still runs", pid, p.dir)
		}
		g.Expect(listening(p.port)).To(BeFalse(), "port %s still answers", p.port)
		_, err := os.Stat(p.dir)
		g.Expect(os.IsNotExist(err)).To(BeTrue(), "data dir %s: %v", p.dir, err)
	}
	g.Eventually(func(g Gomega) {
		// one event per decision: both clusters may go in one
		g.Expect(strings.Join(eventsWith(g, ctx, pool, "ScaledDown"), "\n")).To(And(ContainSubstring(c1), ContainSubstring(c2), ContainSubstring("(Idle): it held no application for 3s")))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pool), pool)).To(Succeed())
		g.Expect(pool.Status.Clusters).To(BeEmpty())
		g.Expect(framework.Condition(pool.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())
	series := `terraplane_resourcepool_scaled_total{direction="%s",namespace="` + ns + `",pool="` + poolName + `",reason="%s"}`
	g.Expect(scrapeMetric(g, metricsURL, fmt.Sprintf(series, "up", "ApplicationsWaiting"))).To(Equal(2.0))
	g.Expect(scrapeMetric(g, metricsURL, fmt.Sprintf(series, "down", "Idle"))).To(Equal(2.0))
}

// TestAutoscaleRefusals: autoscale input the CRD refuses.
func TestAutoscaleRefusals(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const ns = "e2e-autoscale-bad"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	for _, tc := range []struct {
		name, want string
		edit       func(*scalingv1.ResourcePool)
	}{
		{"min above max", "autoscale.min must be at most autoscale.max", func(p *scalingv1.ResourcePool) { p.Spec.Autoscale.Min = 4 }},
		{"not a cluster pool", "autoscale is only for pools of KubernetesCluster claims", func(p *scalingv1.ResourcePool) {
			p.Spec.ClaimTemplate.APIVersion, p.Spec.ClaimTemplate.Kind = "storage.terraplane.io/v1alpha1", "Bucket"
		}},
		{"size with autoscale", "with autoscale, leave size at 0", func(p *scalingv1.ResourcePool) { p.Spec.Size = 2 }},
		{"maxSize with autoscale", "with autoscale, autoscale.max is the cap", func(p *scalingv1.ResourcePool) { p.Spec.MaxSize = ptr.To[int32](3) }},
		{"no applications per cluster", "spec.autoscale.applicationsPerCluster", func(p *scalingv1.ResourcePool) { p.Spec.Autoscale.ApplicationsPerCluster = 0 }},
		{"no max", "spec.autoscale.max", func(p *scalingv1.ResourcePool) { p.Spec.Autoscale.Max = 0 }},
		{"negative scaleDownAfter", "scaleDownAfter must be a duration", func(p *scalingv1.ResourcePool) {
			p.Spec.Autoscale.ScaleDownAfter = &metav1.Duration{Duration: -time.Second}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			p := autoscaledPool(ns, "bad", time.Minute)
			tc.edit(p)
			err := env.Client.Create(ctx, p)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.want))
		})
	}
	By(t, "scaleDownAfter defaults to 10m")
	p := autoscaledPool(ns, "defaults", time.Minute)
	p.Spec.Autoscale.ScaleDownAfter = nil
	g.Expect(env.Client.Create(ctx, p)).To(Succeed())
	g.Expect(p.Spec.Autoscale.ScaleDownAfter).To(Equal(&metav1.Duration{Duration: 10 * time.Minute}))
}
