package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/holder"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/statelock"
	"terraplane.io/terraplane/test/framework"
)

// ledgerModule creates a terraform_data whose create appends a start line to a ledger
// file, takes var.sleep seconds and then appends a create line, so a test sees a create
// under way and counts the creates that really happened.
var ledgerModule = map[string]string{"main.tf": `
variable "name" { type = string }
variable "ledger" { type = string }
variable "sleep" {
  type    = number
  default = 0
}
resource "terraform_data" "x" {
  input = var.name
  provisioner "local-exec" {
    command = "echo start ${var.name} >> ${var.ledger}; sleep ${var.sleep}; echo create ${var.name} >> ${var.ledger}"
  }
}
output "name" { value = terraform_data.x.output }
`}

func ledgerModuleObj(ns, name, ledger string, sleep int) *terraformv1.Module {
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "ledger-module"}}
	m.Spec.ReclaimPolicy = common.ReclaimDelete
	m.Spec.ForProvider = &apiextensionsv1.JSON{Raw: fmt.Appendf(nil, `{"name":%q,"ledger":%q,"sleep":%d}`, name, ledger, sleep)}
	return m
}

// creates counts the ledger's create lines for name.
func creates(g Gomega, ledger, name string) int { return ledgerLines(g, ledger, "create "+name) }

// started counts the ledger's start lines for name: creates in their provisioner.
func started(g Gomega, ledger, name string) int { return ledgerLines(g, ledger, "start "+name) }

// ledgerLines counts the ledger's lines that are line.
func ledgerLines(g Gomega, ledger, line string) int {
	b, err := os.ReadFile(ledger)
	if os.IsNotExist(err) {
		return 0
	}
	g.Expect(err).NotTo(HaveOccurred())
	return strings.Count(string(b), line+"\n")
}

// stateResources counts the resources in the state Secret terraform's kubernetes backend wrote.
func stateResources(g Gomega, ctx context.Context, ns, name string) int {
	var s corev1.Secret
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s)).To(Succeed())
	zr, err := gzip.NewReader(bytes.NewReader(s.Data["tfstate"]))
	g.Expect(err).NotTo(HaveOccurred())
	var st struct {
		Resources []json.RawMessage `json:"resources"`
	}
	g.Expect(json.NewDecoder(zr).Decode(&st)).To(Succeed())
	return len(st.Resources)
}

// holdLock makes the state lock Lease of mg look held by a run of h: a Terraplane
// process when h is set, otherwise a terraform that who ran by hand.
func holdLock(g Gomega, ctx context.Context, mg resource.Managed, who string, h *holder.Holder) client.ObjectKey {
	key := client.ObjectKey{Namespace: mg.GetNamespace(), Name: "lock-" + resource.StateSecretName(mg)}
	lock := statelock.LockInfo{ID: "dead-run-" + mg.GetName(), Operation: "OperationTypeApply", Who: who, Created: time.Now()}
	if h != nil {
		raw, _ := json.Marshal(h)
		lock.Info, lock.Who = string(raw), h.String()
	}
	info, _ := json.Marshal(lock)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
		Annotations: map[string]string{common.LockInfoAnnotation: string(info)}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("dead-run-" + mg.GetName())}}
	g.Expect(env.Client.Create(ctx, lease)).To(Succeed())
	return key
}

// deadHolder is a Terraplane process of this machine that has exited.
func deadHolder(g Gomega) *holder.Holder {
	cmd := exec.Command("true")
	g.Expect(cmd.Run()).To(Succeed())
	h := holder.Self()
	h.ID, h.PID = "exited-process", cmd.Process.Pid
	return &h
}

func moduleConditions(g Gomega, ctx context.Context, m *terraformv1.Module) (synced, ready metav1.Condition) {
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
	return framework.Condition(m.Status.Conditions, common.TypeSynced), framework.Condition(m.Status.Conditions, common.TypeReady)
}

// TestCrashRecovery: a stale state lock left by a dead run of this host is released
// before the next run; one held by another host stops with a one-line StateLocked;
// an interrupted create with no state stops at CreateInterrupted until the user says
// create again; a create interrupted by a graceful shutdown writes its state, and the
// restarted controller carries on without creating twice.
func TestCrashRecovery(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-crash"
	ledger := filepath.Join(t.TempDir(), "ledger")
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ledger-module"}, Data: ledgerModule})).To(Succeed())

	By(t, "resources whose state locks were left by dead runs, and one interrupted create")
	stale := ledgerModuleObj(ns, "stale-lock", ledger, 0)
	foreign := ledgerModuleObj(ns, "foreign-lock", ledger, 0)
	interrupted := ledgerModuleObj(ns, "interrupted", ledger, 0)
	interrupted.Annotations = map[string]string{common.CreatePendingAnnotation: time.Now().UTC().Format(time.RFC3339)}
	for _, m := range []*terraformv1.Module{stale, foreign, interrupted} {
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	}
	staleKey := holdLock(g, ctx, stale, "", deadHolder(g))
	foreignKey := holdLock(g, ctx, foreign, "ci@another-host", nil)

	workDir := t.TempDir()
	start := time.Now()
	mgr, err := env.StartManager(workDir, app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	g.Eventually(func(g Gomega) {
		_, ready := moduleConditions(g, ctx, stale)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%v", stale.Status.Conditions)
	}).WithTimeout(timeout).Should(Succeed())
	t.Logf("FIGURE stale lock released and resource Ready %s after the controller started", time.Since(start).Round(time.Millisecond))
	info, err := statelock.LockHolder(ctx, env.Client, staleKey)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info).To(BeNil(), "the stale lock is released")
	g.Expect(eventsWith(g, ctx, stale, "StateLockReleased")).NotTo(BeEmpty(), "releasing a stale lock is announced")

	By(t, "a lock held by another host is left alone, with a one-line condition saying how to release it")
	g.Eventually(func(g Gomega) {
		synced, _ := moduleConditions(g, ctx, foreign)
		g.Expect(synced.Reason).To(Equal(common.ReasonStateLocked))
		g.Expect(synced.Message).To(And(ContainSubstring("ci@another-host"), ContainSubstring("terraplane unlock")))
		g.Expect(synced.Message).NotTo(ContainSubstring("\n"))
	}).WithTimeout(timeout).Should(Succeed())
	info, err = statelock.LockHolder(ctx, env.Client, foreignKey)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info).NotTo(BeNil(), "a lock of another host is never broken")
	g.Expect(statelock.Unlock(ctx, env.Client, foreignKey, info.ID)).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, ready := moduleConditions(g, ctx, foreign)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%v", foreign.Status.Conditions)
	}).WithTimeout(timeout).Should(Succeed())

	By(t, "an interrupted create of a user module stops, naming what may exist, and creates nothing")
	g.Eventually(func(g Gomega) {
		synced, _ := moduleConditions(g, ctx, interrupted)
		g.Expect(synced.Reason).To(Equal(common.ReasonCreateInterrupted))
		g.Expect(synced.Message).To(And(ContainSubstring("terraform_data.x"), ContainSubstring(common.CreateAgainAnnotation)))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(creates(g, ledger, "interrupted")).To(Equal(0))

	By(t, "create-again lets it create, once, and both annotations go")
	g.Eventually(func() error {
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(interrupted), interrupted)
		interrupted.Annotations[common.CreateAgainAnnotation] = "true"
		return env.Client.Update(ctx, interrupted)
	}).WithTimeout(timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		_, ready := moduleConditions(g, ctx, interrupted)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%v", interrupted.Status.Conditions)
		g.Expect(interrupted.Annotations).NotTo(HaveKey(common.CreatePendingAnnotation))
		g.Expect(interrupted.Annotations).NotTo(HaveKey(common.CreateAgainAnnotation))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(creates(g, ledger, "interrupted")).To(Equal(1))

	By(t, "a shutdown during a slow create: terraform gets SIGINT, stops the provisioner and writes its state")
	slow := ledgerModuleObj(ns, "slow", ledger, 4)
	g.Expect(env.Client.Create(ctx, slow)).To(Succeed())
	slowLock := client.ObjectKey{Namespace: ns, Name: "lock-" + resource.StateSecretName(slow)}
	lockRecordsCreate := func(g Gomega) bool {
		r, err := statelock.ReadLock(ctx, env.Client, slowLock)
		g.Expect(err).NotTo(HaveOccurred())
		return r.CreatePending
	}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(slow), slow)).To(Succeed())
		g.Expect(started(g, ledger, "slow")).To(Equal(1), "terraform is in the provisioner")
		g.Expect(lockRecordsCreate(g)).To(BeTrue(), "the create is recorded on its state lock while it runs")
		g.Expect(slow.Annotations).NotTo(HaveKey(common.CreatePendingAnnotation), "and not on the resource")
	}).WithTimeout(timeout).WithPolling(100 * time.Millisecond).Should(Succeed())
	g.Expect(mgr.Stop()).To(Succeed())
	g.Expect(creates(g, ledger, "slow")).To(Equal(0), "the interrupted provisioner never finished")
	g.Expect(stateResources(g, ctx, ns, resource.StateSecretName(slow))).To(Equal(1), "terraform recorded the resource it made (tainted) before it exited")
	info, err = statelock.LockHolder(ctx, env.Client, slowLock)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info).To(BeNil(), "terraform released its lock on the way out")
	g.Expect(lockRecordsCreate(g)).To(BeTrue(), "the create's outcome is not known: the lock keeps its record")

	mgr, err = env.StartManager(workDir, app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	g.Eventually(func(g Gomega) {
		_, ready := moduleConditions(g, ctx, slow)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue), "%v", slow.Status.Conditions)
		g.Expect(slow.Annotations).NotTo(HaveKey(common.CreatePendingAnnotation))
		g.Expect(lockRecordsCreate(g)).To(BeFalse(), "the record went once the create carried on")
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(creates(g, ledger, "slow")).To(Equal(1), "the restarted controller did not create again")
}
