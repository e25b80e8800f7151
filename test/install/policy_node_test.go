package install

import (
	"context"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "terraplane.io/terraplane/apis/policy/v1alpha1"
)

// policyRefusedOnNode applies a plan policy whose rule does not compile, as an admin
// would, to the chart's install on the node: the API server asks the controller pod's
// webhook through its Service, which refuses it with the CEL error; a policy that
// compiles is accepted.
func policyRefusedOnNode(g Gomega, ctx context.Context, n *nodeEnv) {
	broken := &policyv1.PlanPolicy{ObjectMeta: metav1.ObjectMeta{Name: "node-broken"},
		Spec: policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{{Name: "broken", Expression: "plan.resource_changes.all(rc, rc.type =="}}}}
	g.Eventually(func(g Gomega) {
		err := n.Client.Create(ctx, broken.DeepCopy())
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "created, or refused for another cause: %v", err)
		g.Expect(err.Error()).To(And(ContainSubstring("its rules do not compile"), ContainSubstring("Syntax error")))
	}).WithTimeout(time.Minute).WithPolling(2*time.Second).Should(Succeed(), "the webhook's Service answers once its caBundle is set")
	good := &policyv1.PlanPolicy{ObjectMeta: metav1.ObjectMeta{Name: "node-good"},
		Spec: policyv1.PlanPolicySpec{Rules: []policyv1.PolicyRule{{Name: "small", Expression: "plan.resource_changes.size() <= 50"}}}}
	g.Expect(n.Client.Create(ctx, good)).To(Succeed())
	g.Expect(n.Client.Delete(ctx, good)).To(Succeed())
}
