package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/resource"
	"terraplane.io/terraplane/test/framework"
)

// ownCredentials is shell that sets tok and api to the token and the API address of the
// kubeconfig terraform's state backend uses ($KUBE_CONFIG_PATH), whose token is inline or
// in a file.
const ownCredentials = `kc="$KUBE_CONFIG_PATH"
      tok=$(sed -n 's/^ *token: *//p' "$kc" 2>/dev/null)
      [ -z "$tok" ] && tok=$(cat "$(sed -n 's/^ *tokenFile: *//p' "$kc")" 2>/dev/null)
      api=$(sed -n 's/^ *server: *//p' "$kc" 2>/dev/null)`

// hostileModule is what a tenant's module author may write: at create, local-exec
// gathers whatever credentials it can reach (those of the state backend's kubeconfig
// among them) and tries to act with them, writing what it found to var.report.
const hostileModule = `
variable "report" { type = string }
variable "victim" { type = string }
variable "look" { type = list(string) }
variable "victim_state" { type = string }
resource "terraform_data" "x" {
  provisioner "local-exec" {
    interpreter = ["/bin/sh", "-c"]
    command     = <<-EOT
      r=${var.report}
      echo "uid $(id -u)" > $r
      env | grep -q "${var.victim}" && echo "FOUND victim in env" >> $r
      for p in /proc/[0-9]*; do
        if tr '\0' '\n' < $p/environ 2>/dev/null | grep -q "${var.victim}"; then echo "FOUND victim in $p/environ" >> $r; fi
      done
      for f in ${join(" ", var.look)}; do
        if cat "$f" >/dev/null 2>&1; then echo "READ $f" >> $r; else echo "DENIED $f" >> $r; fi
      done
      if ls /var/run/secrets/kubernetes.io/serviceaccount/token >/dev/null 2>&1; then echo "READ pod token" >> $r; fi
      ` + ownCredentials + `
      [ -n "$tok" ] && [ -n "$api" ] && echo "READ own credentials" >> $r
      try() { echo "$1 $(curl -sk -o $r.$1 -w '%%{http_code}' -H "Authorization: Bearer $tok" $2 $api$3)" >> $r; }
      try "list-secrets-terraplane-system" "" /api/v1/namespaces/terraplane-system/secrets
      try "list-secrets-kube-system" "" /api/v1/namespaces/kube-system/secrets
      try "list-secrets-other-tenant" "" /api/v1/namespaces/e2e-pool-b/secrets
      try "get-other-tenant-state" "" /api/v1/namespaces/e2e-pool-b/secrets/${var.victim_state}
      try "list-secrets-own-namespace" "" /api/v1/namespaces/e2e-pool-a/secrets
      try "create-clusterrolebinding" "-X POST -H Content-Type:application/json -d {\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":\"pwned\"},\"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"cluster-admin\"},\"subjects\":[{\"kind\":\"User\",\"name\":\"mallory\"}]}" /apis/rbac.authorization.k8s.io/v1/clusterrolebindings
    EOT
  }
}
`

// victimModule keeps a warm random provider whose environment holds a credential.
const victimModule = `
terraform {
  required_providers {
    random = { source = "hashicorp/random" }
  }
}
resource "random_pet" "p" {}
output "pet" { value = random_pet.p.id }
`

// TestHostileModuleInARunner: with terraform in runner processes, a tenant's module that
// hunts for credentials finds only its own pool's: not another pool's provider
// environment, not the controller's files, and its pool's credentials (the state
// backend's, through the runner's loopback proxy) are refused everywhere but the pool's
// own namespace.
func TestHostileModuleInARunner(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	const nsA, nsB = "e2e-pool-a", "e2e-pool-b"
	victim := "victim-credential-7f3a9c"
	for _, ns := range []string{nsA, nsB} {
		g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	}
	bin, err := framework.TerraplaneBinary()
	g.Expect(err).NotTo(HaveOccurred())
	workDir := t.TempDir()
	mgr, err := env.StartManager(workDir, app.Options{Runner: app.RunnerProcess, RunnerBinary: bin})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()

	By(t, "another tenant's Module keeps a warm provider whose environment holds a credential")
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "token"}, StringData: map[string]string{"token": victim}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0",
			Credentials: []terraformv1.CredentialEnv{{Env: "VICTIM_TOKEN", SecretKeyRef: terraformv1.SecretKeySelector{Name: "token", Key: "token"}}}}})).To(Succeed())
	victimMod := moduleFrom(g, ctx, nsB, "victim", map[string]string{"main.tf": victimModule}, "{}")
	victimMod.Spec.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
	g.Expect(env.Client.Create(ctx, victimMod)).To(Succeed())
	waitModuleReady(g, ctx, victimMod)

	By(t, "a tenant's hostile Module runs in its own pool")
	reports, err := os.MkdirTemp("", "terraplane-e2e-report-") // where the module's uid may write
	g.Expect(err).NotTo(HaveOccurred())
	defer os.RemoveAll(reports)
	g.Expect(os.Chmod(reports, 0o777)).To(Succeed())
	report := filepath.Join(reports, "report")
	pools, _ := filepath.Glob(filepath.Join(os.TempDir(), "terraplane-runners-*", "pools", nsB+"_default"))
	g.Expect(pools).NotTo(BeEmpty(), "pool B's runner directory")
	look := []string{env.ControlPlane.Kubeconfig, filepath.Join(workDir, "anything"), filepath.Join(pools[0], "token"), filepath.Join(pools[0], "kubeconfig")}
	g.Expect(os.WriteFile(look[1], []byte("controller's"), 0o600)).To(Succeed())
	inputs, _ := json.Marshal(map[string]any{"report": report, "victim": victim, "look": look,
		"victim_state": resource.StateSecretName(victimMod)})
	hostile := moduleFrom(g, ctx, nsA, "hostile", map[string]string{"main.tf": hostileModule}, string(inputs))
	g.Expect(env.Client.Create(ctx, hostile)).To(Succeed())
	waitModuleReady(g, ctx, hostile)

	raw, err := os.ReadFile(report)
	g.Expect(err).NotTo(HaveOccurred())
	got := string(raw)
	t.Logf("FIGURE what the hostile module found:\n%s", got)
	g.Expect(got).NotTo(ContainSubstring("uid 0"), "a module never runs as root")
	g.Expect(got).NotTo(ContainSubstring("FOUND victim"), "another pool's provider environment is out of reach")
	for _, f := range look {
		g.Expect(got).To(ContainSubstring("DENIED "+f), "the controller's and other pools' files are out of reach")
	}
	g.Expect(got).NotTo(ContainSubstring("READ pod token"))
	g.Expect(got).To(ContainSubstring("READ own credentials"), "the module finds the credentials its terraform's state backend uses")
	for _, attempt := range []string{"list-secrets-terraplane-system", "list-secrets-kube-system", "list-secrets-other-tenant", "get-other-tenant-state", "create-clusterrolebinding"} {
		g.Expect(got).To(ContainSubstring(attempt+" 403"), "%s with the pool's token is forbidden", attempt)
	}
	g.Expect(got).To(ContainSubstring("list-secrets-own-namespace 200"), "the pool reaches its own namespace's state")

	By(t, "each pool's state lives where its RBAC reaches")
	var secrets corev1.SecretList
	g.Expect(env.Client.List(ctx, &secrets, client.InNamespace(nsA), client.MatchingLabels{"tfstate": "true"})).To(Succeed())
	g.Expect(secrets.Items).NotTo(BeEmpty(), "pool A's state is in its namespace")
}

// moduleFrom is a Module of namespace ns whose module is files (in a ConfigMap made for
// it) and whose forProvider is inputs.
func moduleFrom(g Gomega, ctx context.Context, ns, name string, files map[string]string, inputs string) *terraformv1.Module {
	return moduleAs(g, ctx, env.Client, ns, name, files, inputs)
}

// moduleAs is moduleFrom with the ConfigMap made by c's user.
func moduleAs(g Gomega, ctx context.Context, c client.Client, ns, name string, files map[string]string, inputs string) *terraformv1.Module {
	g.Expect(c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-module"}, Data: files})).To(Succeed())
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	m.Spec.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: name + "-module"}}
	m.Spec.ReclaimPolicy = common.ReclaimDelete
	m.Spec.ForProvider = &apiextensionsv1.JSON{Raw: []byte(inputs)}
	return m
}

// waitModuleReady waits until m is Ready, failing with its Synced condition.
func waitModuleReady(g Gomega, ctx context.Context, m *terraformv1.Module) {
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(framework.Condition(m.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue),
			"%s: %+v", m.Name, framework.Condition(m.Status.Conditions, common.TypeSynced))
	}).WithTimeout(timeout).Should(Succeed())
}
