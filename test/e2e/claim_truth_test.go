package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
)

// slowModule makes one slow instance per storage GB (a new one takes 4 s to create) and
// refuses sizes of 100 GB or more at plan time.
var slowModule = map[string]string{"main.tf": `
variable "size" { type = number }
resource "terraform_data" "instance" {
  count = var.size
  input = count.index
  provisioner "local-exec" { command = "sleep 4" }
  lifecycle {
    precondition {
      condition     = var.size < 100
      error_message = "size must be under 100 GB"
    }
  }
}
output "instances" { value = length(terraform_data.instance) }
`}

// slowClasses makes a ModuleClass name of slowModule in the admin namespace, which
// appNS may use, and a PostgreSQLInstanceClass name in appNS that points at it.
func slowClasses(ctx context.Context, g Gomega, name, appNS string) (*terraformv1.ModuleClass, *databasev1.PostgreSQLInstanceClass) {
	cm, class, portable := slowClassObjects(name, appNS)
	for _, o := range []client.Object{cm, class, portable} {
		g.Expect(env.Client.Create(ctx, o)).To(Succeed())
	}
	return class, portable
}

// slowClassObjects is what slowClasses makes, not made yet: the ConfigMap holding
// slowModule, the ModuleClass and the PostgreSQLInstanceClass.
func slowClassObjects(name, appNS string) (*corev1.ConfigMap, *terraformv1.ModuleClass, *databasev1.PostgreSQLInstanceClass) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name + "-module"}, Data: slowModule}
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: name}, AllowedNamespaces: framework.Allow(appNS)}
	class.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
	class.SpecTemplate.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: cm.Name}}
	class.SpecTemplate.Inputs = []terraformv1.InputMapping{{FromFieldPath: "spec.storageGB", ToVariable: "size"}}
	portable := &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: name},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: class.Name, Namespace: adminNS}}
	return cm, class, portable
}

// TestClaimsTellTheTruth: after an edit, `kubectl wait --for=condition=Ready` on the claim
// blocks until the edit is applied; the claim is Reconciling meanwhile (kstatus), and a
// failing update makes the claim Synced=False and Stalled with the resource's reason.
func TestClaimsTellTheTruth(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	appNS := "e2e-claim-truth"
	g.Expect(env.Namespace(ctx, adminNS)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	class, portable := slowClasses(ctx, g, "slow", appNS)
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "orders"}}
	claim.Spec.ClassRef = &common.LocalReference{Name: portable.Name}
	claim.Spec.StorageGB = 1
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())

	By(t, "kubectl wait returns once the claim is Ready, and the claim has caught up")
	kubectlWait(g, appNS, "postgresqlinstance/orders")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
	g.Expect(claim.Status.ObservedGeneration).To(Equal(claim.Generation))
	g.Expect(meta(claim.Status.Conditions, common.TypeReconciling)).To(BeNil())

	By(t, "after an edit, kubectl wait blocks until the edit is applied")
	g.Expect(updateLatest(ctx, claim, func() { claim.Spec.StorageGB = 2 })).To(Succeed())
	start := time.Now()
	kubectlWait(g, appNS, "postgresqlinstance/orders")
	waited := time.Since(start)
	mod := &terraformv1.Module{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: claim.Spec.ResourceRef.Namespace, Name: claim.Spec.ResourceRef.Name}, mod)).To(Succeed())
	g.Expect(string(mod.Status.AtProvider.Raw)).To(ContainSubstring(`"instances":2`), "kubectl wait returned after %s, before the edit was applied", waited)
	g.Expect(waited).To(BeNumerically(">=", 3*time.Second), "creating the second instance takes 4 s")
	t.Logf("kubectl wait returned %s after the edit, once it was applied", waited.Round(100*time.Millisecond))

	By(t, "a failing update makes the claim Synced=False and Stalled with the resource's reason and message")
	g.Expect(updateLatest(ctx, claim, func() {
		claim.Spec.StorageGB = 200
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		synced := framework.Condition(claim.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(synced.Message).To(ContainSubstring("Resource precondition failed"))
		g.Expect(synced.Message).To(HavePrefix("Module " + mod.Namespace + "/" + mod.Name + ": "))
		g.Expect(framework.Condition(claim.Status.Conditions, common.TypeReady).ObservedGeneration).To(BeNumerically("<", claim.Generation),
			"Ready must not speak for an edit that was not applied")
	}).WithTimeout(timeout).Should(Succeed())
	out, err := exec.Command(kubectlBin(g), "--kubeconfig", env.ControlPlane.Kubeconfig, "wait", "--for=condition=Ready", "--timeout=3s",
		"-n", appNS, "postgresqlinstance/orders").CombinedOutput()
	g.Expect(err).To(HaveOccurred(), "kubectl wait must not report Ready for an update that failed: %s", out)

	By(t, "through a class that wants approval, the claim is Synced=False AwaitingApproval until the plan is approved")
	g.Expect(updateLatest(ctx, class, func() {
		class.SpecTemplate.Approval = common.ApprovalManual
	})).To(Succeed())
	// the policy reaches the Module with the class's next revision: the claim is edited
	// once the rollout let the Module on it
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(class), class)).To(Succeed())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		g.Expect(class.Status.Revisions).To(HaveLen(2))
		g.Expect(mod.Spec.Revision).To(Equal(class.Status.LatestRevision))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(updateLatest(ctx, claim, func() {
		claim.Spec.StorageGB = 3
	})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		synced := framework.Condition(claim.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(synced.Reason).To(Equal(common.ReasonAwaitingApproval))
		g.Expect(synced.Message).To(HavePrefix("Module " + mod.Namespace + "/" + mod.Name + ": "))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		g.Expect(mod.Status.Terraform.Plan).NotTo(BeNil())
		g.Expect(mod.Status.Terraform.Plan.ID).NotTo(BeEmpty())
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(string(mod.Status.AtProvider.Raw)).To(ContainSubstring(`"instances":2`), "nothing is applied before the approval")
	out, err = exec.Command(kubectlBin(g), "--kubeconfig", env.ControlPlane.Kubeconfig, "wait", "--for=condition=Ready", "--timeout=3s",
		"-n", appNS, "postgresqlinstance/orders").CombinedOutput()
	g.Expect(err).To(HaveOccurred(), "kubectl wait must not report Ready for an edit awaiting approval: %s", out)
	orig := mod.DeepCopy()
	mod.Spec.ApprovedPlan = mod.Status.Terraform.Plan.ID
	g.Expect(env.Client.Patch(ctx, mod, client.MergeFrom(orig))).To(Succeed())
	kubectlWait(g, appNS, "postgresqlinstance/orders")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
	g.Expect(string(mod.Status.AtProvider.Raw)).To(ContainSubstring(`"instances":3`), "kubectl wait returned before the approved plan was applied")
}

func meta(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func kubectlBin(g Gomega) string {
	bin, err := devenv.Tool("kubectl")
	g.Expect(err).NotTo(HaveOccurred())
	return bin
}

// kubectlWait runs `kubectl wait --for=condition=Ready` as a user would.
func kubectlWait(g Gomega, ns, obj string) {
	out, err := exec.Command(kubectlBin(g), "--kubeconfig", env.ControlPlane.Kubeconfig, "wait", "--for=condition=Ready", "--timeout=120s", "-n", ns, obj).CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), "kubectl wait: %s", out)
	g.Expect(strings.TrimSpace(string(out))).To(HaveSuffix("condition met"))
}
