package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/test/framework"
)

// webhookDenied is how the API server words a refusal by the plan policies' webhook.
const webhookDenied = `admission webhook "planpolicies.policy.terraplane.io" denied the request`

// TestPolicyAdmission: with the controller's webhook registered (as `terraplane dev`
// and the chart do), a plan policy whose rule does not compile is refused when it is
// applied, with the CEL compiler's error: `kubectl apply` of a syntax error, a
// NamespacedPlanPolicy reading a field the plan lacks (told the fields there are), an
// update that breaks a rule. While no controller answers, the webhook fails open and the
// policy controller reports the rule instead (InvalidExpression).
func TestPolicyAdmission(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "e2e-policy-admission"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	port, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	hook := app.LocalWebhook(port, adminNS)
	mgr, err := env.StartManager(t.TempDir(), app.Options{PolicyWebhook: hook})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	defer func() {
		_ = env.Client.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: hook.Configuration}})
	}()
	g.Eventually(func() error { return mgr.Runtime.GetWebhookServer().StartedChecker()(nil) }).WithTimeout(30 * time.Second).Should(Succeed())

	By(t, "kubectl apply of a policy with a syntax error is refused with the CEL error")
	out, err := kubectlApplyStdin(g, `apiVersion: policy.terraplane.io/v1alpha1
kind: PlanPolicy
metadata:
  name: e2e-syntax
spec:
  rules:
  - name: broken
    expression: "plan.resource_changes.all(rc, rc.type =="
`)
	g.Expect(err).To(HaveOccurred(), "kubectl apply accepted it: %s", out)
	g.Expect(out).To(And(ContainSubstring(webhookDenied), ContainSubstring("PlanPolicy e2e-syntax: its rules do not compile: rule broken: expression: ERROR: <input>:1:"),
		ContainSubstring("Syntax error")))
	t.Logf("kubectl apply: %s", strings.TrimSpace(out))
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: "e2e-syntax"}, &policyv1.PlanPolicy{}))).To(BeTrue())

	By(t, "a rule that reads a field the plan lacks is refused, naming the field and the fields there are")
	typo := &policyv1.NamespacedPlanPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "typo"},
		Spec: policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{{Name: "tagged",
			Expression: `plan.resource_changes.all(rc, rc.chnage.after != null)`}}}}
	err = env.Client.Create(ctx, typo)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(And(ContainSubstring(webhookDenied), ContainSubstring("undefined field 'chnage'"),
		ContainSubstring("plan.resource_changes[] has action_reason, address, change,")))

	By(t, "a policy that compiles is accepted, and an update that breaks it refused")
	good := &policyv1.PlanPolicy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-good"},
		Spec: policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{{Name: "small", Expression: `plan.resource_changes.size() <= 50`}}}}
	g.Expect(env.Client.Create(ctx, good)).To(Succeed())
	defer func() { _ = env.Client.Delete(ctx, good) }()
	orig := good.DeepCopy()
	good.Spec.Rules[0].Expression = `plan.resource_changes.size() <= '50'`
	err = env.Client.Patch(ctx, good, client.MergeFrom(orig)) // the policy controller may have written its status since
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("found no matching overload for '_<=_' applied to '(int, string)'"))

	By(t, "while no controller answers, the webhook fails open and the policy reports the rule")
	g.Expect(mgr.Stop()).To(Succeed())
	late := &policyv1.PlanPolicy{ObjectMeta: metav1.ObjectMeta{Name: "e2e-late"},
		Spec: policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{{Name: "broken", Expression: `plan.resource_changes.all(rc, rc.chnage)`}}}}
	g.Expect(env.Client.Create(ctx, late)).To(Succeed())
	defer func() { _ = env.Client.Delete(ctx, late) }()
	mgr, err = env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(late), late)).To(Succeed())
		synced := framework.Condition(late.Status.Conditions, common.TypeSynced)
		g.Expect(synced.Reason).To(Equal("InvalidExpression"), "%+v", synced)
		g.Expect(synced.Message).To(ContainSubstring("undefined field 'chnage'"))
	}).WithTimeout(timeout).Should(Succeed())
}

// kubectlApplyStdin runs `kubectl apply -f -` on manifest and returns what it printed.
func kubectlApplyStdin(g Gomega, manifest string) (string, error) {
	cmd := exec.Command(kubectlBin(g), "--kubeconfig", env.ControlPlane.Kubeconfig, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
