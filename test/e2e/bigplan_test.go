package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/resource"
)

// bigPlanModule plans one small change, yet its saved plan is several MiB: a plan file
// keeps the value of every variable, and it has six of about 900 KiB each. Its state
// stays small (only a digest of them is kept).
var bigPlanModule = map[string]string{"main.tf": `
variable "a" { type = string }
variable "b" { type = string }
variable "c" { type = string }
variable "d" { type = string }
variable "e" { type = string }
variable "f" { type = string }
resource "terraform_data" "digest" { input = sha256(join("", [var.a, var.b, var.c, var.d, var.e, var.f])) }
output "digest" { value = terraform_data.digest.output }
`}

// planSecrets lists the Secrets that keep m's plans, by name.
func planSecrets(g Gomega, ctx context.Context, m *terraformv1.Module) map[string]*corev1.Secret {
	list := &corev1.SecretList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(m.Namespace), client.HasLabels{resource.PlanLabel},
		client.MatchingLabels{resource.ManagedLabel: string(m.UID)})).To(Succeed())
	out := map[string]*corev1.Secret{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out
}

// TestPlanOverTheRequestLimit: a plan whose saved file is larger than one request to the
// API server may carry is kept across several Secrets while it awaits approval; approving
// its id applies it; the Secrets go with the plan and with the resource.
func TestPlanOverTheRequestLimit(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-big-plan"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "big-module"}, Data: bigPlanModule})).To(Succeed())
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "big"}}
	m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "big-module"}}
	m.Spec.ReclaimPolicy = common.ReclaimDelete
	m.Spec.Approval = common.ApprovalManual
	for _, v := range []string{"a", "b", "c", "d", "e", "f"} {
		random := make([]byte, 675<<10) // 900 KiB in base64, which does not compress
		_, _ = rand.Read(random)
		g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blob-" + v},
			Data: map[string]string{"value": base64.StdEncoding.EncodeToString(random)}})).To(Succeed())
		m.Spec.VariablesFrom = append(m.Spec.VariablesFrom, terraformv1.VariableFrom{Name: v,
			ValueFrom: terraformv1.VariableSource{ConfigMapKeyRef: &terraformv1.ConfigMapKeySelector{Name: "blob-" + v, Key: "value"}}})
	}
	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())

	By(t, "the create waits for approval, its saved plan kept across several Secrets")
	plan := awaitPlan(g, ctx, m, "")
	g.Expect(plan.Add).To(Equal(1))
	index := resource.PlanSecretName(m)
	var kept int
	secrets := planSecrets(g, ctx, m)
	g.Expect(secrets).To(HaveKey(index))
	for name, s := range secrets {
		if name != index {
			for _, v := range s.Data {
				kept += len(v)
			}
		}
	}
	t.Logf("the saved plan takes %d bytes in %d chunk Secrets", kept, len(secrets)-1)
	g.Expect(kept).To(BeNumerically(">", 3<<20), "the saved plan is over the API server's request limit")

	By(t, "approving its id applies it")
	approvePlan(g, ctx, m, plan.ID)
	g.Eventually(func(g Gomega) {
		synced, ready := moduleConditions(g, ctx, m)
		g.Expect(synced.Status).To(Equal(metav1.ConditionTrue), "%+v", synced)
		g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(m.Status.Terraform.LastApply).NotTo(BeNil())
		g.Expect(m.Status.Terraform.LastApply.ID).To(Equal(plan.ID))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(string(m.Status.AtProvider.Raw)).To(MatchRegexp(`"digest":"[0-9a-f]{64}"`))

	By(t, "once applied only the plan's text is kept, in its Plan, and deleting the module takes that too")
	text := &terraformv1.Plan{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: resource.PlanName(m)}}
	g.Eventually(func(g Gomega) {
		g.Expect(planSecrets(g, ctx, m)).To(BeEmpty())
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(text), text)).To(Succeed())
		g.Expect(text.Text).To(ContainSubstring("terraform_data.digest"))
		g.Expect(text.Summary.ID).To(Equal(plan.ID))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	deleteModule(g, ctx, m)
	g.Expect(planSecrets(g, ctx, m)).To(BeEmpty())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(text), text))).To(BeTrue(), "the Plan goes with the module")
}
