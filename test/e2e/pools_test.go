package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/internal/runner"
	"terraplane.io/terraplane/test/framework"
)

// poolModule is the module both tenants use: it keeps a random provider (configured with
// the tenant's own credential), and at create reports which credential its run holds and
// what its pool's token may read: its own state, and another pool's.
const poolModule = `
terraform {
  required_providers {
    random = { source = "hashicorp/random" }
  }
}
variable "report" { type = string }
variable "other_state" { type = string }
variable "namespace" { type = string }
resource "random_pet" "p" {}
resource "terraform_data" "x" {
  provisioner "local-exec" {
    interpreter = ["/bin/sh", "-c"]
    command     = <<-EOT
      r=${var.report}
      echo "credential $POOL_CREDENTIAL" > $r
      ` + ownCredentials + `
      get() { echo "$1 $(curl -sk -o /dev/null -w '%%{http_code}' -H "Authorization: Bearer $tok" $api$2)" >> $r; }
      get "list-own-namespace" /api/v1/namespaces/${var.namespace}/secrets
      [ -n "${var.other_state}" ] && get "get-other-state" /api/v1/namespaces/${var.other_state}
      true
    EOT
  }
}
output "pet" { value = random_pet.p.id }
`

// TestTenantPools: two tenants run the same module in their own runner pools, each with
// its own Provider. Each pool's state lives in its namespace, where its RBAC reaches and
// nowhere else; pool alpha's token cannot read pool beta's state Secret, and each run sees
// its own tenant's credential only.
func TestTenantPools(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	type tenant struct{ ns, pool, credential string }
	alpha, beta := tenant{"e2e-pools-a", "alpha", "alpha-credential-2b7e"}, tenant{"e2e-pools-b", "beta", "beta-credential-91c4"}
	bin, err := framework.TerraplaneBinary()
	g.Expect(err).NotTo(HaveOccurred())
	mgr, err := env.StartManager(t.TempDir(), app.Options{Runner: app.RunnerProcess, RunnerBinary: bin})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	reports, err := os.MkdirTemp("", "terraplane-e2e-pools-") // where the runners' uids may write
	g.Expect(err).NotTo(HaveOccurred())
	defer os.RemoveAll(reports)
	g.Expect(os.Chmod(reports, 0o777)).To(Succeed())

	run := func(tn tenant, otherState string) *terraformv1.Module {
		g.Expect(env.Namespace(ctx, tn.ns)).To(Succeed())
		g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tn.ns, Name: "random-creds"},
			StringData: map[string]string{"token": tn.credential}})).To(Succeed())
		g.Expect(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: tn.ns, Name: "random-" + tn.pool},
			Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0",
				Credentials: []terraformv1.CredentialEnv{{Env: "POOL_CREDENTIAL", SecretKeyRef: terraformv1.SecretKeySelector{Name: "random-creds", Key: "token"}}}}})).To(Succeed())
		inputs, _ := json.Marshal(map[string]any{"report": filepath.Join(reports, tn.pool),
			"other_state": otherState, "namespace": tn.ns})
		m := moduleFrom(g, ctx, tn.ns, "shared", map[string]string{"main.tf": poolModule}, string(inputs))
		m.Spec.ProviderConfigRefs = []common.LocalReference{{Name: "random-" + tn.pool}}
		m.Spec.RunnerPool = tn.pool
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
		waitModuleReady(g, ctx, m)
		return m
	}
	By(t, "tenant beta's Module runs in pool beta, then tenant alpha's in pool alpha")
	modBeta := run(beta, "")
	betaState := resource.StateSecretName(modBeta)
	modAlpha := run(alpha, beta.ns+"/secrets/"+betaState)
	alphaState := resource.StateSecretName(modAlpha)

	By(t, "each pool's state is in its own namespace only")
	var states corev1.SecretList
	g.Expect(env.Client.List(ctx, &states, client.MatchingLabels{"tfstate": "true"})).To(Succeed())
	where := map[string][]string{}
	for _, s := range states.Items {
		where[s.Name] = append(where[s.Name], s.Namespace)
	}
	g.Expect(where[alphaState]).To(Equal([]string{alpha.ns}))
	g.Expect(where[betaState]).To(Equal([]string{beta.ns}))

	By(t, "each pool's ServiceAccount reaches its own state and not the other's")
	can := func(tn tenant, ns, name string) bool {
		sa := runner.ServiceAccountName(runner.PoolRef{Namespace: tn.ns, Name: tn.pool})
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "system:serviceaccount:" + tn.ns + ":" + sa, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + tn.ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: ns, Name: name}}}
		g.Expect(env.Client.Create(ctx, review)).To(Succeed())
		return review.Status.Allowed
	}
	g.Expect(can(alpha, alpha.ns, alphaState)).To(BeTrue(), "alpha reaches its state")
	g.Expect(can(beta, beta.ns, betaState)).To(BeTrue(), "beta reaches its state")
	g.Expect(can(alpha, beta.ns, betaState)).To(BeFalse(), "alpha may not read beta's state")
	g.Expect(can(beta, alpha.ns, alphaState)).To(BeFalse(), "beta may not read alpha's state")

	By(t, "inside pool alpha's run: its own credential, its own state readable, beta's state forbidden")
	for _, tn := range []tenant{alpha, beta} {
		raw, err := os.ReadFile(filepath.Join(reports, tn.pool))
		g.Expect(err).NotTo(HaveOccurred())
		t.Logf("FIGURE what pool %s's run found:\n%s", tn.pool, raw)
		g.Expect(string(raw)).To(ContainSubstring("credential "+tn.credential+"\n"), "a run holds its own tenant's credential")
		g.Expect(string(raw)).To(ContainSubstring("list-own-namespace 200"), "a pool reads its own namespace's state")
	}
	raw, _ := os.ReadFile(filepath.Join(reports, alpha.pool))
	g.Expect(string(raw)).NotTo(ContainSubstring(beta.credential))
	g.Expect(string(raw)).To(ContainSubstring("get-other-state 403"), "pool alpha's token is refused beta's state Secret")
	for _, m := range []*terraformv1.Module{modAlpha, modBeta} {
		g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	}
}
