package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/test/framework"
)

// snoopModule is a tenant's module that, at create, reports its uid and tries to read
// another pool's directory (var.victim_dir) and warm providers' environment.
const snoopModule = `
variable "report" { type = string }
variable "victim_dir" { type = string }
variable "victim" { type = string }
resource "terraform_data" "x" {
  provisioner "local-exec" {
    interpreter = ["/bin/sh", "-c"]
    command     = <<-EOT
      r=${var.report}
      echo "uid $(id -u)" > $r
      for f in token kubeconfig; do
        if cat "${var.victim_dir}/$f" >/dev/null 2>&1; then echo "READ $f" >> $r; else echo "DENIED $f" >> $r; fi
      done
      if ls "${var.victim_dir}/work" >/dev/null 2>&1; then echo "LISTED work" >> $r; else echo "DENIED work" >> $r; fi
      for p in /proc/[0-9]*; do
        if tr '\0' '\n' < $p/environ 2>/dev/null | grep -q "${var.victim}"; then echo "FOUND victim in $p/environ" >> $r; fi
      done
    EOT
  }
}
`

// hashedRunnerUID is the uid a pool's runner ran under before uids were allocated:
// 20000 + fnv32a("<namespace>/<pool>") % 10000, a name the tenant chooses.
func hashedRunnerUID(ns, pool string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(ns + "/" + pool))
	return 20000 + h.Sum32()%10000
}

// newestPoolDir is the pool directory of ns/pool that the running runner uses (the one
// whose token was written last).
func newestPoolDir(g Gomega, ns, pool string) string {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "terraplane-runners-*", "pools", ns+"_"+pool))
	g.Expect(dirs).NotTo(BeEmpty(), "the runner directory of pool %s/%s", ns, pool)
	newest, at := "", time.Time{}
	for _, d := range dirs {
		if info, err := os.Stat(filepath.Join(d, "token")); err == nil && info.ModTime().After(at) {
			newest, at = d, info.ModTime()
		}
	}
	g.Expect(newest).NotTo(BeEmpty())
	return newest
}

// TestChosenPoolNameGetsItsOwnUID: a tenant (alice, with every right in her namespace
// and none elsewhere) names her pool so that the pool's name
// hashes onto another tenant's pool's uid (as uids were once derived). Its runner still
// runs under a uid of its own, and its module can read neither the other pool's token,
// kubeconfig and work directory nor its warm provider's environment.
func TestChosenPoolNameGetsItsOwnUID(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const victimNS, tenantNS = "e2e-uid-victim", "e2e-uid-tenant"
	chosen := ""
	for i := 0; chosen == ""; i++ {
		if name := fmt.Sprintf("p%d", i); hashedRunnerUID(tenantNS, name) == hashedRunnerUID(victimNS, "default") {
			chosen = name
		}
	}
	t.Logf("FIGURE pool %s/%s hashes onto %s/default's old uid %d", tenantNS, chosen, victimNS, hashedRunnerUID(victimNS, "default"))
	for _, ns := range []string{victimNS, tenantNS} {
		g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	}
	bin, err := framework.TerraplaneBinary()
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := env.StartManager(t.TempDir(), app.Options{Runner: app.RunnerProcess, RunnerBinary: bin})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "the victim's Module keeps a warm provider whose environment holds its credential")
	victim := "victim-credential-5d2e81"
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: victimNS, Name: "token"}, StringData: map[string]string{"token": victim}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: victimNS, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0",
			Credentials: []terraformv1.CredentialEnv{{Env: "VICTIM_TOKEN", SecretKeyRef: terraformv1.SecretKeySelector{Name: "token", Key: "token"}}}}})).To(Succeed())
	victimMod := moduleFrom(g, ctx, victimNS, "victim", map[string]string{"main.tf": victimModule}, "{}")
	victimMod.Spec.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
	g.Expect(env.Client.Create(ctx, victimMod)).To(Succeed())
	waitModuleReady(g, ctx, victimMod)
	victimDir := newestPoolDir(g, victimNS, "default")
	info, err := os.Stat(victimDir)
	g.Expect(err).NotTo(HaveOccurred())
	victimUID := info.Sys().(*syscall.Stat_t).Uid

	By(t, "the tenant's Module, in the pool it named, looks for the victim's files")
	reports, err := os.MkdirTemp("", "terraplane-e2e-uids-") // where the runners' uids may write
	g.Expect(err).NotTo(HaveOccurred())
	defer os.RemoveAll(reports)
	g.Expect(os.Chmod(reports, 0o777)).To(Succeed())
	report := filepath.Join(reports, "report")
	inputs, _ := json.Marshal(map[string]any{"report": report, "victim_dir": victimDir, "victim": victim})
	alice, err := env.Tenant(ctx, "alice", tenantNS) // what a tenant may hold: everything in its namespace
	g.Expect(err).NotTo(HaveOccurred())
	snoop := moduleAs(g, ctx, alice.Client, tenantNS, "snoop", map[string]string{"main.tf": snoopModule}, string(inputs))
	snoop.Spec.RunnerPool = chosen
	g.Expect(alice.Client.Create(ctx, snoop)).To(Succeed(), "alice makes her Module in the pool she named")
	waitModuleReady(g, ctx, snoop)

	raw, err := os.ReadFile(report)
	g.Expect(err).NotTo(HaveOccurred())
	got := string(raw)
	t.Logf("FIGURE victim's uid %d; what the tenant's module found:\n%s", victimUID, got)
	g.Expect(got).NotTo(ContainSubstring(fmt.Sprintf("uid %d\n", victimUID)), "the chosen pool runs under the victim's uid")
	g.Expect(got).NotTo(ContainSubstring("uid 0\n"), "a module never runs as root")
	for _, f := range []string{"token", "kubeconfig", "work"} {
		g.Expect(got).To(ContainSubstring("DENIED "+f), "the victim pool's %s is out of reach", f)
	}
	g.Expect(got).NotTo(ContainSubstring("FOUND victim"), "the victim pool's provider environment is out of reach")
	for _, m := range []*terraformv1.Module{snoop, victimMod} {
		g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	}
}

// runnerPids are the pids of the running runners of ns/pool.
func runnerPids(ns, pool string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if len(args) > 3 && args[1] == "runner" && args[2] == "--pool" && args[3] == ns+"/"+pool {
			var pid int
			_, _ = fmt.Sscanf(filepath.Base(filepath.Dir(f)), "%d", &pid)
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestRunnerPoolLimitAndIdleRunners: with one runner per namespace, a Module of a second
// pool is Synced=False (RunnerPoolLimit, one event) while the first pool's runner runs;
// once that runner has been idle for the TTL it stops, the second pool runs, and the
// first pool's next run starts its runner again.
func TestRunnerPoolLimitAndIdleRunners(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const ns = "e2e-pool-limit"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	bin, err := framework.TerraplaneBinary()
	g.Expect(err).NotTo(HaveOccurred())
	const ttl = 20 * time.Second
	mgr, err := env.StartManager(t.TempDir(), app.Options{Runner: app.RunnerProcess, RunnerBinary: bin,
		RunnerMaxPoolsPerNamespace: 1, RunnerIdleTTL: ttl})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	module := `
variable "n" { type = number }
resource "terraform_data" "x" { input = var.n }
`
	mod := func(name, pool string) *terraformv1.Module {
		m := moduleFrom(g, ctx, ns, name, map[string]string{"main.tf": module}, `{"n": 1}`)
		m.Spec.RunnerPool = pool
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
		return m
	}

	By(t, "pool first's Module runs; its runner keeps running")
	first := mod("first", "first")
	waitModuleReady(g, ctx, first)
	firstPids := runnerPids(ns, "first")
	g.Expect(firstPids).To(HaveLen(1), "pool first's runner")

	By(t, "pool second's Module waits: the namespace runs as many runners as it may")
	second := mod("second", "second")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(second), second)).To(Succeed())
		synced := framework.Condition(second.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal("RunnerPoolLimit"), "%+v", synced)
		g.Expect(synced.Message).To(ContainSubstring("--runner-max-pools-per-namespace"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(runnerPids(ns, "second")).To(BeEmpty())

	By(t, "pool first's runner stops once idle; pool second's runs then")
	waitModuleReady(g, ctx, second)
	g.Eventually(func() []int { return runnerPids(ns, "first") }).WithTimeout(timeout).Should(BeEmpty(), "pool first's idle runner stopped")
	evs, err := env.Events(ctx, second)
	g.Expect(err).NotTo(HaveOccurred())
	limits := 0
	for _, ev := range evs {
		if ev.Reason == "RunnerPoolLimit" {
			limits++
		}
	}
	g.Expect(limits).To(Equal(1), "one RunnerPoolLimit event: %+v", evs)

	By(t, "pool first's next run starts its runner again")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(first), first)).To(Succeed())
	first.Spec.ForProvider.Raw = []byte(`{"n": 2}`)
	g.Expect(env.Client.Update(ctx, first)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(first), first)).To(Succeed())
		ready := framework.Condition(first.Status.Conditions, common.TypeReady)
		synced := framework.Condition(first.Status.Conditions, common.TypeSynced)
		g.Expect(synced.ObservedGeneration).To(Equal(first.Generation))
		g.Expect(synced.Reason).To(Equal(common.ReasonReconcileSuccess), "%+v", synced)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())
	again := runnerPids(ns, "first")
	t.Logf("FIGURE pool first's runner: pid %v, then %v after it idled out", firstPids, again)
	g.Expect(again).To(HaveLen(1))
	g.Expect(again).NotTo(Equal(firstPids), "a new runner")
	for _, m := range []*terraformv1.Module{first, second} {
		g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	}
}
