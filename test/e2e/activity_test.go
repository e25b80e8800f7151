package e2e

import (
	"context"
	"regexp"
	"strconv"
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
	"terraplane.io/terraplane/test/framework"
)

// hangingModule makes one resource whose create takes 45 s (a provisioner that waits), as a
// provider call that hangs would.
var hangingModule = map[string]string{"main.tf": `
variable "name" { type = string }
variable "size" {
  type    = number
  default = 1
}
resource "terraform_data" "slow" {
  input = var.name
  provisioner "local-exec" {
    command = "sleep 45"
  }
}
output "endpoint" { value = "${terraform_data.slow.output}:${var.size}" }
`}

// TestLongRunIsVisible: while terraform's create hangs, the claim says within 30 s which
// resource terraform is creating and for how long, and that an edit made meanwhile is
// queued behind the run; the edit is applied once the run ends.
func TestLongRunIsVisible(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns, appNS := "e2e-activity", "e2e-activity-app"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "slow"}, Data: hangingModule})).To(Succeed())
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "slow"}}
	class.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
	class.SpecTemplate.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "slow"}}
	class.SpecTemplate.Inputs = []terraformv1.InputMapping{{FromFieldPath: "metadata.name", ToVariable: "name"}, {FromFieldPath: "spec.storageGB", ToVariable: "size"}}
	class.SpecTemplate.Connection = []terraformv1.ConnectionMapping{{FromOutput: "endpoint", ToKey: "endpoint"}}
	class.AllowedNamespaces = framework.Allow(appNS)
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "slow"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "slow", Namespace: ns}})).To(Succeed())
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "a claim whose create hangs says within 30 s what terraform is creating, and for how long")
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "q"}}
	claim.Spec.ClassRef = &common.LocalReference{Name: "slow"}
	claim.Spec.StorageGB = 1
	claim.Spec.WriteConnectionSecretToRef = &common.LocalReference{Name: "q-conn"}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	created := time.Now()
	reconciling := func(g Gomega) metav1.Condition {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		return framework.Condition(claim.Status.Conditions, common.TypeReconciling)
	}
	g.Eventually(func(g Gomega) {
		c := reconciling(g)
		g.Expect(c.Reason).To(Equal(common.ReasonTerraformRunning), "Reconciling %+v", c)
		g.Expect(c.Message).To(MatchRegexp(`^Module \S+: generation \d+: terraform is creating module\.this\.terraform_data\.slow for \d+s$`))
	}).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
	t.Logf("FIGURE the claim said what terraform is creating %s after it was made: %s", time.Since(created).Round(100*time.Millisecond), reconciling(g).Message)

	By(t, "an edit made while the create runs is reported as queued behind it")
	g.Expect(updateLatest(ctx, claim, func() { claim.Spec.StorageGB = 2 })).To(Succeed())
	edited := time.Now()
	queued := regexp.MustCompile(`generation (\d+): terraform is creating module\.this\.terraform_data\.slow for \d+s; generation (\d+) is queued behind this run$`)
	g.Eventually(func(g Gomega) {
		m := queued.FindStringSubmatch(reconciling(g).Message)
		g.Expect(m).NotTo(BeNil(), "Reconciling says %q", reconciling(g).Message)
		running, _ := strconv.Atoi(m[1])
		next, _ := strconv.Atoi(m[2])
		g.Expect(next).To(BeNumerically(">", running))
	}).WithTimeout(30 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())
	t.Logf("FIGURE the claim said the edit is queued %s after it: %s", time.Since(edited).Round(100*time.Millisecond), reconciling(g).Message)

	By(t, "once the run ends, the edit is applied and the claim is Ready")
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(claim.Status.ObservedGeneration).To(Equal(claim.Generation))
		g.Expect(framework.Condition(claim.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(framework.Condition(claim.Status.Conditions, common.TypeReconciling).Status).NotTo(Equal(metav1.ConditionTrue))
		secret := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: claim.Spec.WriteConnectionSecretToRef.Name}, secret)).To(Succeed())
		g.Expect(string(secret.Data["endpoint"])).To(HaveSuffix(":2"))
	}).WithTimeout(3 * time.Minute).Should(Succeed())
	g.Expect(env.Client.Delete(ctx, claim)).To(Succeed())
}
