package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
)

// scrape reads a metrics endpoint into series "name{label="value",...}" → value (a
// histogram's count under name_count, its sum under name_sum, and each bucket under
// name_bucket with le).
func scrape(g Gomega, url string) map[string]float64 {
	resp, err := http.Get(url)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	return parseMetrics(g, resp.Body)
}

// apiserverRequests is how many requests with verb (GET, LIST, ...) for resource (a
// plural) kube-apiserver has answered, from any client.
func apiserverRequests(g Gomega, verb, resource string) float64 {
	cs, err := kubernetes.NewForConfig(env.ControlPlane.Config)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	var n float64
	for series, v := range parseMetrics(g, bytes.NewReader(raw)) {
		if strings.HasPrefix(series, "apiserver_request_total{") && strings.Contains(series, fmt.Sprintf("resource=%q", resource)) &&
			strings.Contains(series, fmt.Sprintf("verb=%q", verb)) {
			n += v
		}
	}
	return n
}

// parseMetrics reads metrics in the text format into series, as scrape says.
func parseMetrics(g Gomega, r io.Reader) map[string]float64 {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]float64{}
	series := func(name string, m *dto.Metric, extra ...string) string {
		labels := extra
		for _, l := range m.GetLabel() {
			labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
		}
		sort.Strings(labels)
		return name + "{" + strings.Join(labels, ",") + "}"
	}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			switch {
			case m.GetHistogram() != nil:
				out[series(name+"_count", m)] = float64(m.GetHistogram().GetSampleCount())
				out[series(name+"_sum", m)] = m.GetHistogram().GetSampleSum()
				for _, b := range m.GetHistogram().GetBucket() {
					out[series(name+"_bucket", m, fmt.Sprintf("le=%q", fmt.Sprint(b.GetUpperBound())))] = float64(b.GetCumulativeCount())
				}
			case m.GetGauge() != nil:
				out[series(name, m)] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[series(name, m)] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// countModules counts the Modules of the cluster as the gauges do.
func countModules(g Gomega, ctx context.Context) map[string]float64 {
	list := &terraformv1.ModuleList{}
	g.Expect(env.Client.List(ctx, list)).To(Succeed())
	n := map[string]float64{}
	for _, m := range list.Items {
		conds := m.Status.Conditions
		synced := apimeta.FindStatusCondition(conds, common.TypeSynced)
		n["exists"]++
		for name, counts := range map[string]bool{
			"ready":  apimeta.IsStatusConditionTrue(conds, common.TypeReady),
			"synced": apimeta.IsStatusConditionTrue(conds, common.TypeSynced),
			"awaiting_approval": synced != nil && synced.Status == metav1.ConditionFalse &&
				(synced.Reason == common.ReasonAwaitingApproval || synced.Reason == common.ReasonDestructiveChangeRefused),
			"stalled": apimeta.IsStatusConditionTrue(conds, common.TypeStalled),
		} {
			if counts {
				n[name]++
			}
		}
	}
	return n
}

// TestMetricsOfARunningController scrapes a running controller: every series
// docs/observability.md lists is there, the object gauges count the cluster's Modules and
// claims, the first-ready and deletion histograms count what this test made Ready and
// deleted, the run histogram has buckets up to the deadline, and the warm provider pool
// reports the random provider's processes, hits, misses and memory.
func TestMetricsOfARunningController(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns, appNS := "e2e-metrics", "e2e-metrics-app"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "metrics-module"}, Data: teamModule})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}})).To(Succeed())
	src := terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "metrics-module"}}
	class := moduleClass(ns, "metrics", src, []terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}})
	class.AllowedNamespaces = framework.Allow(appNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "metrics"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "metrics", Namespace: ns}})).To(Succeed())
	port, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := env.StartManager(t.TempDir(), app.Options{MetricsAddr: fmt.Sprintf("127.0.0.1:%d", port), MetricsSecure: false})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	g.Eventually(func() error { _, err := http.Get(url); return err }).WithTimeout(timeout).Should(Succeed())
	const module, claimKind = `group="terraform.terraplane.io",kind="Module"`, `group="database.terraplane.io",kind="PostgreSQLInstance"`
	before := scrape(g, url)

	By(t, "two Modules and a claim made Ready, one Module awaiting approval")
	modules := map[string]*terraformv1.Module{}
	for _, name := range []string{"a", "b", "held"} {
		m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		m.Spec.Source = src
		m.Spec.ReclaimPolicy = common.ReclaimDelete
		m.Spec.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
		g.Expect(m.SetForProvider(map[string]any{"name": name})).To(Succeed())
		if name == "held" {
			m.Spec.Approval = common.ApprovalManual
		}
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
		modules[name] = m
	}
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "c"}}
	claim.Spec.ClassRef = &common.LocalReference{Name: "metrics"}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	waitClaimReady(g, ctx, claim)
	for _, name := range []string{"a", "b"} {
		g.Eventually(func(g Gomega) {
			_, ready := moduleConditions(g, ctx, modules[name])
			g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		}).WithTimeout(timeout).Should(Succeed())
	}
	awaitPlan(g, ctx, modules["held"], "")

	By(t, "the gauges count the cluster's objects; the histograms what this test made Ready")
	const random = `provider="registry.terraform.io/hashicorp/random"`
	g.Eventually(func(g Gomega) {
		got, want := scrape(g, url), countModules(g, ctx)
		for _, gauge := range []string{"exists", "ready", "synced", "awaiting_approval", "stalled"} {
			g.Expect(got).To(HaveKeyWithValue("terraplane_managed_"+gauge+"{"+module+"}", want[gauge]), gauge)
		}
		g.Expect(want["awaiting_approval"]).To(BeNumerically(">=", 1))
		claims := &databasev1.PostgreSQLInstanceList{}
		g.Expect(env.Client.List(ctx, claims)).To(Succeed())
		ready := 0.0
		for _, c := range claims.Items {
			if apimeta.IsStatusConditionTrue(c.Status.Conditions, common.TypeReady) {
				ready++
			}
		}
		g.Expect(got).To(HaveKeyWithValue("terraplane_claim_exists{"+claimKind+"}", float64(len(claims.Items))))
		g.Expect(got).To(HaveKeyWithValue("terraplane_claim_ready{"+claimKind+"}", ready))
		g.Expect(got["terraplane_managed_first_ready_seconds_count{"+module+"}"]-before["terraplane_managed_first_ready_seconds_count{"+module+"}"]).
			To(BeNumerically(">=", 3), "a, b and the claim's Module were first Ready (the histogram is process-wide: other tests' resources may join them)")
		g.Expect(got["terraplane_claim_first_ready_seconds_count{"+claimKind+"}"] - before["terraplane_claim_first_ready_seconds_count{"+claimKind+"}"]).
			To(BeNumerically(">=", 1))
		g.Expect(got).To(HaveKey(`terraplane_terraform_run_seconds_bucket{` + module + `,le="1200",result="success",verb="apply"}`))
		g.Expect(got).To(HaveKey(`terraplane_terraform_run_seconds_bucket{` + module + `,le="3600",result="success",verb="apply"}`))
		g.Expect(got["terraplane_terraform_processes_total{}"]).To(BeNumerically(">", before["terraplane_terraform_processes_total{}"]))
		g.Expect(got["terraplane_provider_processes{"+random+"}"]).To(BeNumerically(">=", 1))
		g.Expect(got["terraplane_provider_pool_misses_total{"+random+"}"]).To(BeNumerically(">=", 1))
		g.Expect(got["terraplane_provider_pool_hits_total{"+random+"}"]).To(BeNumerically(">=", 1), "four runs of one provider configuration share its process")
		g.Expect(got).To(HaveKey("terraplane_provider_pool_evictions_total{" + random + "}"))
		g.Expect(got["terraplane_provider_memory_bytes{"+random+"}"]).To(BeNumerically(">", 1<<20), "a provider process takes more than a MiB")
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "deleting a Module and the claim is timed")
	g.Expect(env.Client.Delete(ctx, modules["a"])).To(Succeed())
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(modules["a"]), &terraformv1.Module{})) &&
			apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), &databasev1.PostgreSQLInstance{}))
	}).WithTimeout(timeout).Should(BeTrue())
	g.Eventually(func(g Gomega) {
		got := scrape(g, url)
		g.Expect(got["terraplane_managed_deletion_seconds_count{"+module+"}"]-before["terraplane_managed_deletion_seconds_count{"+module+"}"]).
			To(Equal(2.0), "a and the claim's Module")
		g.Expect(got["terraplane_claim_deletion_seconds_count{"+claimKind+"}"] - before["terraplane_claim_deletion_seconds_count{"+claimKind+"}"]).To(Equal(1.0))
		g.Expect(got).To(HaveKeyWithValue("terraplane_managed_exists{"+module+"}", countModules(g, ctx)["exists"]))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "every series docs/observability.md lists is there")
	page, err := os.ReadFile("../../docs/observability.md")
	g.Expect(err).NotTo(HaveOccurred())
	names := map[string]bool{}
	for s := range scrape(g, url) {
		name, _, _ := strings.Cut(s, "{")
		names[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_count"), "_bucket"), "_sum")] = true
	}
	for _, m := range regexp.MustCompile("(?m)^\\| `(terraplane_[a-z_]+)").FindAllStringSubmatch(string(page), -1) {
		if m[1] == "terraplane_drift_detected_total" {
			continue // only once drift is found: TestBucketDrift scrapes it
		}
		if strings.HasPrefix(m[1], "terraplane_runner_") {
			continue // only with runner pools: TestRunnerMetrics scrapes them
		}
		if strings.HasPrefix(m[1], "terraplane_resourcepool_") {
			continue // only once a ResourcePool exists: TestResourcePoolBuckets scrapes them
		}
		g.Expect(names).To(HaveKey(m[1]))
	}
	for _, name := range []string{"b", "held"} {
		deleteModule(g, ctx, modules[name])
	}
}
