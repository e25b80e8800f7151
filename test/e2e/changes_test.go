package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/test/framework"
)

// serverModule is a "server" that a change of size replaces (each create appends to a
// ledger), a label that changes in place, and a sensitive token from a Secret.
var serverModule = map[string]string{"main.tf": `
variable "size" { type = string }
variable "label" {
  type    = string
  default = "a"
}
variable "ledger" { type = string }
variable "token" {
  type      = string
  sensitive = true
}
resource "terraform_data" "server" {
  triggers_replace = var.size
  input            = var.size
  provisioner "local-exec" {
    command = "echo create ${self.input} >> ${var.ledger}"
  }
}
resource "terraform_data" "label" { input = var.label }
resource "terraform_data" "secretive" { input = var.token }
output "size" { value = terraform_data.server.output }
output "label" { value = terraform_data.label.output }
`}

// serverModuleObj is a Module of serverModule whose token comes from Secret "server-token".
func serverModuleObj(ns, name, ledger string, edit func(*terraformv1.Module)) *terraformv1.Module {
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "server-module"}}
	m.Spec.ReclaimPolicy = common.ReclaimDelete
	m.Spec.ForProvider = &apiextensionsv1.JSON{Raw: fmt.Appendf(nil, `{"size":"small","ledger":%q}`, ledger)}
	m.Spec.VariablesFrom = []terraformv1.VariableFrom{{Name: "token",
		ValueFrom: terraformv1.VariableSource{SecretKeyRef: &terraformv1.SecretKeySelector{Name: "server-token", Key: "token"}}}}
	if edit != nil {
		edit(m)
	}
	return m
}

// setForProvider merges values into a Module's forProvider, as `kubectl patch` would.
func setForProvider(g Gomega, ctx context.Context, m *terraformv1.Module, values map[string]any) {
	g.Expect(updateLatest(ctx, m, func() {
		cur := map[string]any{}
		g.Expect(json.Unmarshal(m.Spec.ForProvider.Raw, &cur)).To(Succeed())
		for k, v := range values {
			cur[k] = v
		}
		raw, _ := json.Marshal(cur)
		m.Spec.ForProvider = &apiextensionsv1.JSON{Raw: raw}
	})).To(Succeed())
}

// setupServerModules creates namespace ns, the module ConfigMap and the token Secret.
func setupServerModules(g Gomega, ctx context.Context, ns, token string) {
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "server-module"}, Data: serverModule})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "server-token"},
		StringData: map[string]string{"token": token}})).To(Succeed())
}

// controllerProcess is `terraplane controller` run as a process against the test API
// server, logging at debug level to a file and serving plain-HTTP metrics.
type controllerProcess struct {
	cmd     *exec.Cmd
	log     string
	metrics string
}

func startControllerProcess(t *testing.T, args ...string) *controllerProcess {
	t.Helper()
	bin := terraplaneBinary(t)
	port, err := devenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	p := &controllerProcess{log: filepath.Join(t.TempDir(), "controller.log"), metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", port)}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kc := env.ControlPlane.Kubeconfig
	p.cmd = exec.Command(bin, append([]string{"controller", "--kubeconfig", kc, "--state-kubeconfig", kc, "--workdir", t.TempDir(),
		"--plugin-mirror", devenv.PluginMirror(), "--terraform", framework.TerraformBinary(), "--debug", "--user-error-retry", "2s",
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", port), "--metrics-secure=false", "--health-probe-bind-address", "0"}, args...)...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return p
}

// stop sends SIGTERM and waits, as a pod eviction does.
func (p *controllerProcess) stop() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.cmd.Wait()
	}
}

// metric returns the value of the controller's metric series, or -1.
func (p *controllerProcess) metric(g Gomega, series string) float64 {
	return scrapeMetric(g, p.metrics, series)
}

// scrapeMetric returns the value of a metric series at a metrics endpoint, or -1.
func scrapeMetric(g Gomega, url, series string) float64 {
	resp, err := http.Get(url)
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			g.Expect(err).NotTo(HaveOccurred())
			return f
		}
	}
	return -1
}

// eventsWith lists the events about obj with reason.
// eventsWith lists the events about obj with reason, each as "<type>: <message>" so a
// failed count shows what was sent.
func eventsWith(g Gomega, ctx context.Context, obj client.Object, reason string) []string {
	evs, err := env.Events(ctx, obj)
	g.Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, e := range evs {
		if e.Reason == reason {
			out = append(out, fmt.Sprintf("%s: %s (%s, x%d)", e.Type, e.Message, e.LastTimestamp.Format(time.RFC3339), max(e.Count, 1)))
		}
	}
	return out
}

// stateBytes is the Terraform state Secret's content of mg.
func stateBytes(g Gomega, ctx context.Context, mg *terraformv1.Module) []byte {
	s := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: mg.Namespace, Name: resource.StateSecretName(mg)}, s)).To(Succeed())
	return s.Data["tfstate"]
}

// TestDestructiveChangeRefusedThenApproved: a change that replaces the server is refused
// (nothing changes in state, one condition and one event name the address), `terraplane
// plan show` prints it as terraform does, and `terraplane approve` applies that very plan
// once. A sensitive input appears in no status, event, log line or plan shown.
func TestDestructiveChangeRefusedThenApproved(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-refuse"
	token, nextToken := "tok-first-Zq81vR", "tok-second-Xy77pL"
	setupServerModules(g, ctx, ns, token)
	ledger := filepath.Join(t.TempDir(), "ledger")
	ctl := startControllerProcess(t)
	m := serverModuleObj(ns, "web", ledger, nil)
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, ready := moduleConditions(g, ctx, m)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(creates(g, ledger, "small")).To(Equal(1))
	g.Expect(m.Status.Terraform.LastApply).NotTo(BeNil())
	g.Expect(m.Status.Terraform.Resources).To(Equal(3))
	before := stateBytes(g, ctx, m)

	By(t, "a change that replaces the server is refused, once, naming the address")
	setForProvider(g, ctx, m, map[string]any{"size": "large"})
	var synced metav1.Condition
	g.Eventually(func(g Gomega) {
		synced, _ = moduleConditions(g, ctx, m)
		g.Expect(synced.Reason).To(Equal("DestructiveChangeRefused"))
	}).WithTimeout(timeout).Should(Succeed())
	plan := m.Status.Terraform.Plan
	g.Expect(synced.Message).To(ContainSubstring("module.this.terraform_data.server: delete, create"))
	g.Expect(plan.Replace).To(Equal(1))
	g.Expect(plan.Reason).To(Equal(common.PlanUpdate))
	oneRefusal := func(g Gomega) {
		evs := eventsWith(g, ctx, m, "DestructiveChangeRefused")
		g.Expect(evs).To(HaveLen(1))
		g.Expect(evs[0]).To(HavePrefix(corev1.EventTypeWarning + ": "))
		g.Expect(evs[0]).To(ContainSubstring("module.this.terraform_data.server"))
	}
	g.Eventually(oneRefusal).WithTimeout(timeout).Should(Succeed()) // events are sent after the status write
	g.Consistently(oneRefusal).WithTimeout(5 * time.Second).Should(Succeed())
	g.Expect(stateBytes(g, ctx, m)).To(Equal(before), "a refused plan must not touch the state")
	g.Expect(creates(g, ledger, "large")).To(Equal(0))

	By(t, "terraplane plan show prints the replacement as terraform does")
	kc := env.ControlPlane.Kubeconfig
	shown := terraplaneCLI(t, "plan", "show", "module/web", "-n", ns, "--kubeconfig", kc)
	g.Expect(shown).To(ContainSubstring("Plan " + plan.ID))
	g.Expect(shown).To(ContainSubstring("# module.this.terraform_data.server must be replaced"))
	g.Expect(shown).To(MatchRegexp(`~ triggers_replace = "small" -> "large" # forces replacement`))

	By(t, "terraplane approve applies that plan, once")
	approved := terraplaneCLI(t, "approve", "module/web", "-n", ns, "--kubeconfig", kc, "--yes", "--wait")
	g.Expect(approved).To(ContainSubstring("applied plan " + plan.ID))
	g.Expect(creates(g, ledger, "large")).To(Equal(1))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
	g.Expect(m.Status.Terraform.LastApply.ID).To(Equal(plan.ID))
	g.Expect(m.Status.Terraform.LastApply.Replace).To(Equal(1))
	g.Eventually(func(g Gomega) { // the event is sent after the status is written
		g.Expect(eventsWith(g, ctx, m, "Applied")).To(HaveLen(2))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "a new token is applied at once, and neither token shows anywhere")
	sec := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "server-token"}, sec)).To(Succeed())
	sec.Data["token"] = []byte(nextToken)
	g.Expect(env.Client.Update(ctx, sec)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(m.Status.Terraform.LastApply.Change).To(Equal(1))
	}).WithTimeout(timeout).Should(Succeed())
	shown += terraplaneCLI(t, "plan", "show", "module/web", "-n", ns, "--kubeconfig", kc)
	g.Expect(shown).To(ContainSubstring("(sensitive value)"))
	status, _ := json.Marshal(m.Status)
	evs, err := env.Events(ctx, m)
	g.Expect(err).NotTo(HaveOccurred())
	evText, _ := json.Marshal(evs)
	deleteModule(g, ctx, m)
	ctl.stop()
	logs, err := os.ReadFile(ctl.log)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(logs)).To(ContainSubstring(`"terraform ran"`), "debug logs must record terraform runs")
	for what, text := range map[string]string{"status": string(status), "events": string(evText), "plan show": shown, "logs": string(logs)} {
		for _, tok := range []string{token, nextToken} {
			g.Expect(text).NotTo(ContainSubstring(tok), "%s shows a sensitive value", what)
		}
	}
}

// TestManualApproval: with approval Manual every change waits; approving an older plan
// after a second edit applies nothing and says so; approving the current one applies
// exactly that plan. The run histogram and the state gauges move.
func TestManualApproval(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-approval"
	setupServerModules(g, ctx, ns, "tok-manual-Rr55")
	ledger := filepath.Join(t.TempDir(), "ledger")
	ctl := startControllerProcess(t)
	m := serverModuleObj(ns, "db", ledger, func(m *terraformv1.Module) { m.Spec.Approval = common.ApprovalManual })
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())

	By(t, "the create waits for approval, announced once")
	created := awaitPlan(g, ctx, m, "")
	g.Expect(created.Reason).To(Equal(common.PlanCreate))
	g.Expect(created.Add).To(Equal(3))
	// the event is sent after the status that holds the plan is written
	g.Eventually(func(g Gomega) {
		g.Expect(eventsWith(g, ctx, m, "PlanAwaitingApproval")).To(HaveLen(1))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(creates(g, ledger, "small")).To(Equal(0))
	g.Eventually(func(g Gomega) {
		g.Expect(ctl.metric(g, `terraplane_managed_awaiting_approval{group="terraform.terraplane.io",kind="Module"}`)).To(BeNumerically(">=", 1))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(eventsWith(g, ctx, m, "PlanAwaitingApproval")).To(HaveLen(1), "announced once")
	approvePlan(g, ctx, m, created.ID)
	g.Eventually(func(g Gomega) {
		_, ready := moduleConditions(g, ctx, m)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(creates(g, ledger, "small")).To(Equal(1))

	By(t, "two edits: approving the first plan applies nothing and says so")
	setForProvider(g, ctx, m, map[string]any{"label": "b"})
	first := awaitPlan(g, ctx, m, created.ID)
	setForProvider(g, ctx, m, map[string]any{"label": "c"})
	second := awaitPlan(g, ctx, m, first.ID)
	approvePlan(g, ctx, m, first.ID)
	g.Eventually(func(g Gomega) {
		synced, _ := moduleConditions(g, ctx, m)
		g.Expect(synced.Reason).To(Equal("AwaitingApproval"))
		g.Expect(synced.Message).To(ContainSubstring("spec.approvedPlan " + first.ID + " is not the pending plan, so nothing was applied"))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(string(m.Status.AtProvider.Raw)).To(ContainSubstring(`"label":"a"`))

	By(t, "approving the current plan applies exactly it")
	approvePlan(g, ctx, m, second.ID)
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(m.Status.Terraform.LastApply.ID).To(Equal(second.ID))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(string(m.Status.AtProvider.Raw)).To(ContainSubstring(`"label":"c"`))
	g.Expect(m.Status.Terraform.LastApply.Change).To(Equal(1))
	g.Expect(creates(g, ledger, "small")).To(Equal(1), "an in-place change creates nothing")

	By(t, "metrics: terraform runs are timed, and the gauges follow")
	g.Eventually(func(g Gomega) {
		g.Expect(ctl.metric(g, `terraplane_terraform_run_seconds_count{group="terraform.terraplane.io",kind="Module",result="success",verb="apply"}`)).To(BeNumerically(">=", 2))
		g.Expect(ctl.metric(g, `terraplane_terraform_run_seconds_count{group="terraform.terraplane.io",kind="Module",result="success",verb="plan"}`)).To(BeNumerically(">=", 4))
		g.Expect(ctl.metric(g, `terraplane_managed_ready{group="terraform.terraplane.io",kind="Module"}`)).To(BeNumerically(">=", 1))
		g.Expect(ctl.metric(g, `terraplane_managed_awaiting_approval{group="terraform.terraplane.io",kind="Module"}`)).To(BeNumerically("==", 0))
		g.Expect(ctl.metric(g, overdue)).To(BeNumerically("==", 0))
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "metrics: a settled resource last planned over twice its drift interval ago counts as overdue")
	// as if the controller had not reached it for an hour: the next drift check is
	// the default ten minutes away, and a status write wakes no reconcile
	lastPlan, err := json.Marshal(metav1.NewTime(time.Now().Add(-time.Hour)))
	g.Expect(err).NotTo(HaveOccurred())
	patch := []byte(`{"status":{"terraform":{"lastPlanTime":` + string(lastPlan) + `}}}`)
	g.Expect(env.Client.Status().Patch(ctx, m, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(ctl.metric(g, overdue)).To(BeNumerically("==", 1))
	}).WithTimeout(timeout).Should(Succeed())
	deleteModule(g, ctx, m)
}

// overdue is the series of Modules whose drift checks fall behind.
const overdue = `terraplane_managed_drift_check_overdue{group="terraform.terraplane.io",kind="Module"}`

// awaitPlan waits until m holds a plan other than prev awaiting approval, and returns it.
func awaitPlan(g Gomega, ctx context.Context, m *terraformv1.Module, prev string) *common.PlanSummary {
	var plan *common.PlanSummary
	g.Eventually(func(g Gomega) {
		synced, _ := moduleConditions(g, ctx, m)
		g.Expect(synced.Reason).To(Equal("AwaitingApproval"))
		plan = m.Status.Terraform.Plan
		g.Expect(plan).NotTo(BeNil())
		g.Expect(plan.ID).To(MatchRegexp(`^[0-9a-f]{16}$`))
		g.Expect(plan.ID).NotTo(Equal(prev))
		g.Expect(synced.Message).To(ContainSubstring(plan.ID))
	}).WithTimeout(timeout).Should(Succeed())
	return plan
}

// approvePlan sets spec.approvedPlan as `kubectl patch` does.
func approvePlan(g Gomega, ctx context.Context, m *terraformv1.Module, id string) {
	patch := fmt.Appendf(nil, `{"spec":{"approvedPlan":%q}}`, id)
	g.Expect(env.Client.Patch(ctx, m, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
}

// deleteModule deletes m and waits until it is gone.
func deleteModule(g Gomega, ctx context.Context, m *terraformv1.Module) {
	g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	waitGone(g, ctx, m)
}
