package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/test/framework"
)

// plain runs terraform in dir as a pipeline would.
func plain(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(framework.TerraformBinary(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestMigrateFromAnyBackendWithSubmodules migrates a working directory whose state lives
// in a remote backend (terraform's kubernetes backend, in a Secret of its own) and whose
// root module calls a local module in a subdirectory, with the binary, from a directory
// that was never initialised on this machine; then exports it back.
func TestMigrateFromAnyBackendWithSubmodules(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns := "cli-migrate"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	dir := t.TempDir()
	g.Expect(os.MkdirAll(filepath.Join(dir, "modules", "pet"), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`
terraform {
  backend "kubernetes" {
    secret_suffix = "pipeline"
    namespace     = "`+ns+`"
    config_path   = "`+env.ControlPlane.Kubeconfig+`"
  }
}
variable "name" { type = string }
module "pet" {
  source = "./modules/pet"
  name   = var.name
}
resource "terraform_data" "root" { input = "root-${var.name}" }
output "pet" { value = module.pet.id }
`), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "modules", "pet", "main.tf"), []byte(`
variable "name" { type = string }
resource "terraform_data" "pet" { input = "pet-${var.name}" }
output "id" { value = terraform_data.pet.id }
`), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "terraform.tfvars"), []byte("name = \"rex\"\n"), 0o644)).To(Succeed())
	plain(t, dir, "init", "-input=false")
	plain(t, dir, "apply", "-auto-approve", "-input=false")
	g.Expect(os.RemoveAll(filepath.Join(dir, ".terraform"))).To(Succeed()) // as on a fresh checkout

	kubeconfig := []string{"--kubeconfig", env.ControlPlane.Kubeconfig, "--terraform", framework.TerraformBinary()}
	r := terraplane(t, userEnv(t), append([]string{"migrate", dir, "--name", "pipeline", "-n", ns}, kubeconfig...)...)
	g.Expect(r.code).To(BeZero(), "%s%s", r.stdout, r.stderr)
	for _, step := range []string{"==> reading the module in", "==> reading the state of", "==> initialising", "==> moving 2 addresses under module.this",
		"==> creating ConfigMap " + ns + "/pipeline-module with the module (2 files)", "==> pushing the state into the backend of Module " + ns + "/pipeline"} {
		g.Expect(r.stderr).To(ContainSubstring(step))
	}
	g.Expect(r.stdout).To(ContainSubstring("Module " + ns + "/pipeline now holds the state"))
	cm := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pipeline-module"}, cm)).To(Succeed())
	files, err := modsource.ReadTarball(cm.BinaryData[modsource.TarballKey])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).To(HaveKey("modules/pet/main.tf"))
	g.Expect(files).NotTo(HaveKey("terraform.tfvars"))

	By(t, "the controller takes over without changing anything")
	startController(t, userEnv(t), "--kubeconfig", env.ControlPlane.Kubeconfig)
	m := &terraformv1.Module{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pipeline"}}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(m), m)).To(Succeed())
		g.Expect(framework.Condition(m.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue), "%+v", m.Status.Conditions)
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(m.Status.Terraform.LastApplyTime).To(BeNil(), "the first reconcile must plan zero changes and apply nothing")

	By(t, "export hands it back, with its subdirectory")
	out := filepath.Join(t.TempDir(), "out")
	r = terraplane(t, userEnv(t), append([]string{"export", "Module", "pipeline", "-n", ns, "--out", out}, kubeconfig...)...)
	g.Expect(r.code).To(BeZero(), "%s%s", r.stdout, r.stderr)
	g.Expect(r.stderr).To(ContainSubstring("==> reading its state from the cluster"))
	g.Expect(r.stderr).To(MatchRegexp(`==> writing \d+ files to ` + out))
	g.Expect(filepath.Join(out, "module", "modules", "pet", "main.tf")).To(BeAnExistingFile())
	g.Expect(filepath.Join(out, "terraform.tfstate")).To(BeAnExistingFile())
}

// By logs a step of a test.
func By(t *testing.T, step string) {
	t.Helper()
	t.Log("STEP: " + step)
}
