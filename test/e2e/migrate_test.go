package e2e

import (
	"context"
	"errors"
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
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	"terraplane.io/terraplane/internal/app"
	"terraplane.io/terraplane/internal/devenv"
	tpengine "terraplane.io/terraplane/internal/engine"
	"terraplane.io/terraplane/internal/kinds"
	"terraplane.io/terraplane/internal/migrate"
	"terraplane.io/terraplane/internal/modsource"
	"terraplane.io/terraplane/test/framework"
)

// plainTerraform runs the terraform (or OpenTofu) CLI the way a pipeline would, with the provider mirror.
func plainTerraform(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "cli.tfrc")
	if err := os.WriteFile(cfg, []byte(`provider_installation { filesystem_mirror { path = "`+devenv.PluginMirror()+`" } }`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(framework.TerraformBinary(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cfg, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		t.Fatalf("terraform %v: %v", args, err)
	}
	return string(out), 0
}

// TestMigrateAndExport takes state that plain terraform made into Terraplane's custody
// (first reconcile plans nothing, nothing is recreated), binds a claim to it, then hands
// it back so that plain terraform plans no changes.
func TestMigrateAndExport(t *testing.T) {
	ctx := context.Background()
	g := NewWithT(t)
	ns, appNS := "e2e-migrate-admin", "e2e-migrate"
	g.Expect(env.Namespace(ctx, ns)).To(Succeed())
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())

	By(t, "a pipeline's Terraform working directory with local state")
	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, "main.tf"), []byte(teamModule["main.tf"]), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "terraform.tfvars"), []byte("name = \"legacy\"\n"), 0o644)).To(Succeed())
	for _, args := range [][]string{{"init", "-input=false"}, {"apply", "-auto-approve", "-input=false"}} {
		out, code := plainTerraform(t, dir, args...)
		g.Expect(code).To(BeZero(), out)
	}
	secret, code := plainTerraform(t, dir, "output", "-raw", "secret")
	g.Expect(code).To(BeZero(), secret)

	By(t, "terraplane migrate takes custody of the state and binds a claim")
	loader := &modsource.Loader{CacheDir: t.TempDir()}
	eng, err := tpengine.New(ctx, tpengine.Options{WorkDir: t.TempDir(), PluginMirror: devenv.PluginMirror(), TerraformPath: framework.TerraformBinary()})
	g.Expect(err).NotTo(HaveOccurred())
	tools := migrate.Tools{Client: env.Client, Registry: kinds.NewRegistry(loader), Engine: eng, StateKubeconfig: env.ControlPlane.Kubeconfig}
	mod, err := migrate.Migrate(ctx, tools, migrate.Options{Dir: dir, Name: "legacy", Namespace: ns, Claim: "PostgreSQLInstance/" + appNS + "/legacy-db"})
	g.Expect(err).NotTo(HaveOccurred())

	mgr, err := env.StartManager(t.TempDir(), app.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = mgr.Stop() }()
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(mod), mod)).To(Succeed())
		g.Expect(framework.Condition(mod.Status.Conditions, common.TypeReady).Status).To(Equal(metav1.ConditionTrue),
			"%+v", framework.Condition(mod.Status.Conditions, common.TypeSynced))
	}).WithTimeout(timeout).Should(Succeed())
	g.Expect(mod.Status.Terraform.LastApplyTime).To(BeNil(), "the first reconcile must plan zero changes and apply nothing")

	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "legacy-db"}}
	waitClaimReady(g, ctx, claim)
	conn := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "legacy-db-connection"}, conn)).To(Succeed())
	g.Expect(string(conn.Data["secret"])).To(Equal(secret), "the password was regenerated: something was recreated")
	g.Expect(string(conn.Data["endpoint"])).To(Equal("legacy-plain"))

	By(t, "terraplane export hands it back; plain terraform plans no changes")
	out := t.TempDir()
	envNames, err := migrate.Export(ctx, tools, "Module", ns, mod.Name, out)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(envNames).To(BeEmpty())
	g.Expect(filepath.Join(out, "terraform.tfstate")).To(BeAnExistingFile())
	plan, code := plainTerraform(t, out, "init", "-input=false")
	g.Expect(code).To(BeZero(), plan)
	plan, code = plainTerraform(t, out, "plan", "-detailed-exitcode", "-input=false")
	g.Expect(code).To(BeZero(), "plain terraform plans changes after export:\n%s", plan)
	g.Expect(strings.Contains(plan, "No changes")).To(BeTrue(), plan)

	_, err = migrate.Export(ctx, tools, "Module", ns, "no-such-module", t.TempDir())
	g.Expect(err).To(HaveOccurred())
}
