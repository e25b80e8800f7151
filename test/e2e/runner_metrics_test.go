package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/runner"
	"terraplane.io/terraplane/test/framework"
)

// sumOf adds up the series of got named name whose labels hold every one of labels.
func sumOf(got map[string]float64, name string, labels ...string) float64 {
	total := 0.0
	for s, v := range got {
		n, rest, _ := strings.Cut(s, "{")
		if n != name {
			continue
		}
		all := true
		for _, l := range labels {
			all = all && strings.Contains(rest, l)
		}
		if all {
			total += v
		}
	}
	return total
}

// startRunnerManager starts a controller, with opts, whose terraform runs in runner
// processes, stopped when t ends, and returns it with the address of its metrics once
// served.
func startRunnerManager(t *testing.T, g Gomega, opts app.Options) (mgr *framework.Manager, metrics string) {
	bin, err := framework.TerraplaneBinary()
	g.Expect(err).NotTo(HaveOccurred())
	port, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	opts.Runner, opts.RunnerBinary = app.RunnerProcess, bin
	opts.MetricsAddr, opts.MetricsSecure = fmt.Sprintf("127.0.0.1:%d", port), false
	mgr, err = env.StartManager(t.TempDir(), opts)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = mgr.Stop() })
	metrics = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	g.Eventually(func() error { _, err := http.Get(metrics); return err }).WithTimeout(timeout).Should(Succeed())
	return mgr, metrics
}

// TestRunnerMetrics: with runner processes, the runner of a pool serves its terraform
// processes and warm provider pool on an endpoint the controller lists in its metrics
// targets file, labelled with the pool, and the controller counts and times the runs it
// sends there: the numbers match what ran (two Modules created, one that fails).
func TestRunnerMetrics(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const ns = "e2e-runner-metrics"
	pool := `pool="` + ns + `/default"`
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "team-module"}, Data: teamModule})).To(Succeed())
	targets := filepath.Join(t.TempDir(), "runners.json")
	mgr, controller := startRunnerManager(t, g, app.Options{RunnerMetricsTargets: targets})

	By(t, "two Modules of one provider configuration made Ready, and one that fails, in one pool")
	var modules []*terraformv1.Module
	for _, name := range []string{"a", "b"} {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "team-module"}}
		m.Spec.ReclaimPolicy = common.ReclaimDelete
		m.Spec.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
		g.Expect(m.SetForProvider(map[string]any{"name": name})).To(Succeed())
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
		modules = append(modules, m)
	}
	broken := moduleFrom(g, ctx, ns, "broken", failingModule, "{}")
	g.Expect(env.Client.Create(ctx, broken)).To(Succeed())
	for _, m := range modules {
		waitModuleReady(g, ctx, m)
	}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(broken), broken)).To(Succeed())
		g.Expect(framework.Condition(broken.Status.Conditions, common.TypeSynced).Status).To(Equal(metav1.ConditionFalse))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "the targets file names the pool's runner; its metrics say what its terraform and providers did")
	var listed []runner.Target
	raw, err := os.ReadFile(targets)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(json.Unmarshal(raw, &listed)).To(Succeed(), string(raw))
	// other tests' resources still in the cluster may have pools of their own
	var ours *runner.Target
	for i := range listed {
		if listed[i].Labels["pool"] == ns+"/default" {
			ours = &listed[i]
		}
	}
	g.Expect(ours).NotTo(BeNil(), string(raw))
	g.Expect(ours.Targets[0]).To(HavePrefix("127.0.0.1:"))
	url := "http://" + ours.Targets[0] + "/metrics"
	const random = `provider="registry.terraform.io/hashicorp/random"`
	var got map[string]float64
	g.Eventually(func(g Gomega) {
		got = scrape(g, url)
		// the controller's run counts are process-wide, and other tests' resources still
		// reconcile in other pools: the runner's count is checked against what our three
		// Modules need, and the controller's own engine against none
		g.Expect(sumOf(got, "terraplane_terraform_processes_total", pool)).To(BeNumerically(">=", 3), "every Module's terraform ran in the runner")
		g.Expect(sumOf(got, "terraplane_provider_processes", random, pool)).To(BeNumerically(">=", 1))
		g.Expect(sumOf(got, "terraplane_provider_pool_misses_total", random, pool)).To(BeNumerically(">=", 1))
		g.Expect(sumOf(got, "terraplane_provider_pool_hits_total", random, pool)).To(BeNumerically(">=", 1), "the Modules share the pool's random provider")
		g.Expect(got).To(HaveKey("terraplane_provider_pool_evictions_total{" + pool + "," + random + "}"))
		g.Expect(sumOf(got, "terraplane_provider_memory_bytes", random, pool)).To(BeNumerically(">", 1<<20))
		g.Expect(sumOf(got, "process_resident_memory_bytes", pool)).To(BeNumerically(">", 10<<20), "the runner's own RSS")
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(mgr.Engine.Processes()).To(BeZero(), "the controller itself started no terraform")
	t.Logf("FIGURE runner %s: terraform processes %v, random provider: processes %v, hits %v, misses %v, evictions %v, memory %v B; runner RSS %v B",
		pool, sumOf(got, "terraplane_terraform_processes_total", pool), sumOf(got, "terraplane_provider_processes", random, pool),
		sumOf(got, "terraplane_provider_pool_hits_total", random, pool), sumOf(got, "terraplane_provider_pool_misses_total", random, pool),
		sumOf(got, "terraplane_provider_pool_evictions_total", random, pool), sumOf(got, "terraplane_provider_memory_bytes", random, pool),
		sumOf(got, "process_resident_memory_bytes", pool))

	By(t, "the controller counted the runs it sent to the pool, and timed their hop")
	g.Eventually(func(g Gomega) {
		got := scrape(g, controller)
		created := sumOf(got, "terraplane_runner_runs_total", pool, `verb="create"`, `result="success"`)
		failed := sumOf(got, "terraplane_runner_runs_total", pool, `verb="create"`, `result="error"`)
		t.Logf("FIGURE controller: creates sent to %s: %v succeeded, %v failed; hop: %v runs, %.4f s in all", pool, created, failed,
			sumOf(got, "terraplane_runner_hop_seconds_count", pool), sumOf(got, "terraplane_runner_hop_seconds_sum", pool))
		g.Expect(created).To(Equal(2.0), "a and b were each created once")
		g.Expect(failed).To(BeNumerically(">=", 1), "broken's create fails")
		g.Expect(sumOf(got, "terraplane_runner_runs_total", pool, `result="unreachable"`)).To(BeZero())
		g.Expect(sumOf(got, "terraplane_runner_hop_seconds_count", pool, `verb="create"`)).To(Equal(created+failed), "every answered run's hop is timed")
		runs := sumOf(got, "terraplane_runner_runs_total", pool)
		g.Expect(sumOf(got, "terraplane_runner_hop_seconds_count", pool)).To(Equal(runs))
		g.Expect(sumOf(got, "terraplane_runner_hop_seconds_sum", pool)/runs).To(BeNumerically("<", 0.5), "a hop over a local socket")
	}).WithTimeout(timeout).Should(Succeed())
}
