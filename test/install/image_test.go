package install

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	common "terraplane.io/terraplane/apis/common/v1alpha1"
	databasev1 "terraplane.io/terraplane/apis/database/v1alpha1"
	storagev1 "terraplane.io/terraplane/apis/storage/v1alpha1"
	terraformv1 "terraplane.io/terraplane/apis/terraform/v1alpha1"
	"terraplane.io/terraplane/internal/devenv"
	"terraplane.io/terraplane/internal/image"
)

const (
	quickstartUser     = "terraplane"
	quickstartPassword = "terraplane-secret"
	quickstartEndpoint = "http://127.0.0.1:9900"
)

// randomModule is a team module with a provider that only the image's mirror holds.
const randomModule = `
terraform {
  required_providers {
    random = { source = "hashicorp/random" }
  }
}
variable "name" { type = string }
resource "random_string" "s" {
  length  = 8
  special = false
}
output "endpoint" { value = "${var.name}-${random_string.s.result}" }
`

// TestImage builds the image with the aws and random providers, pushes it to a registry
// on loopback, pulls it back, unpacks its root file system and runs the controller from
// it (chroot, as the image's non-root user): the quickstart Bucket on MinIO and a
// ModuleClass claim become Ready with nothing but the image's terraform and providers.
func TestImage(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	if os.Geteuid() != 0 {
		t.Fatal("TestImage runs the image's root file system with chroot, which needs root (CI runs as root)")
	}
	terraform, err := exec.LookPath("terraform")
	g.Expect(err).NotTo(HaveOccurred(), "terraform is not on PATH (make tools checks for it)")

	By(t, "build a static terraplane and the image with the aws and random providers")
	work := t.TempDir()
	bin := terraplaneBinary(t)
	scratch := filepath.Join(work, "layers")
	g.Expect(os.Mkdir(scratch, 0o755)).To(Succeed())
	img, err := image.Build(image.Options{Terraplane: bin, Terraform: terraform, CACerts: "/etc/ssl/certs/ca-certificates.crt",
		ProviderMirror: devenv.PluginMirror(), Providers: []string{"aws", "random"}, Scratch: scratch})
	g.Expect(err).NotTo(HaveOccurred(), "the provider mirror comes from `make tools-test`")
	g.Expect(image.WriteTarball(img, filepath.Join(work, "terraplane.tar"), "terraplane:test")).To(Succeed())

	By(t, "push it to a registry on loopback and pull it back")
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	ref := strings.TrimPrefix(reg.URL, "http://") + "/platform/terraplane:test"
	g.Expect(image.Push(img, ref, name.Insecure)).To(Succeed())
	parsed, err := name.ParseReference(ref, name.Insecure)
	g.Expect(err).NotTo(HaveOccurred())
	pulled, err := remote.Image(parsed)
	g.Expect(err).NotTo(HaveOccurred())
	want, _ := img.Digest()
	got, err := pulled.Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(want))
	cfg, err := pulled.ConfigFile()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Config.User).To(Equal("65532:65532"), "the image runs as a numeric non-root user")

	By(t, "unpack its root file system")
	root := filepath.Join(work, "rootfs")
	g.Expect(unpack(pulled, root)).To(Succeed())
	g.Expect(addDevices(root)).To(Succeed())
	for _, f := range []string{"usr/local/bin/terraplane", "usr/local/bin/terraform", "etc/ssl/certs/ca-certificates.crt", "etc/passwd",
		"opt/terraplane/providers/registry.terraform.io/hashicorp/aws/5.100.0/linux_amd64/terraform-provider-aws_v5.100.0_x5"} {
		g.Expect(filepath.Join(root, f)).To(BeAnExistingFile())
	}
	kubeconfig, err := os.ReadFile(env.ControlPlane.Kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(os.WriteFile(filepath.Join(root, "tmp", "kubeconfig"), kubeconfig, 0o644)).To(Succeed())

	By(t, "start MinIO as the quickstart's S3 (its Secret's keys are MinIO's root credentials)")
	minio, err := devenv.StartMinIO(ctx, filepath.Join(work, "minio"), 0, quickstartUser, quickstartPassword)
	g.Expect(err).NotTo(HaveOccurred(), "MinIO comes from `make tools-test`")
	defer minio.Stop()

	By(t, "run the controller from the image's root file system")
	health, err := devenv.FreePort()
	g.Expect(err).NotTo(HaveOccurred())
	ctrl := chrootCommand(t, pulled, root, "controller", "--kubeconfig", "/tmp/kubeconfig", "--state-kubeconfig", "/tmp/kubeconfig",
		"--workdir", "/tmp/workspaces", "--metrics-bind-address", "0", "--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", health),
		"--user-error-retry", "2s")
	logFile, err := os.Create(filepath.Join(work, "controller.log"))
	g.Expect(err).NotTo(HaveOccurred())
	ctrl.Stdout, ctrl.Stderr = logFile, logFile
	g.Expect(ctrl.Start()).To(Succeed())
	defer func() {
		_ = ctrl.Process.Signal(os.Interrupt)
		_ = ctrl.Wait()
		if t.Failed() {
			log, _ := os.ReadFile(logFile.Name())
			t.Logf("controller log:\n%s", log)
		}
	}()
	g.Eventually(func() (int, error) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", health))
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Equal(http.StatusOK), "the controller becomes ready")

	By(t, "the quickstart Bucket on MinIO becomes Ready")
	applyQuickstart(g, ctx, minio.Endpoint)
	bucket := &storagev1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "quickstart"}}
	waitReady(g, ctx, bucket, func() []metav1.Condition { return bucket.Status.Conditions })

	By(t, "a ModuleClass claim with the random provider becomes Ready")
	claim := claimThroughModuleClass(g, ctx)

	By(t, "deleting the claims destroys what they made")
	for _, obj := range []client.Object{bucket, claim} {
		g.Expect(env.Client.Delete(ctx, obj)).To(Succeed())
	}
	for _, obj := range []client.Object{bucket, claim} {
		g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)) }).
			WithTimeout(3*time.Minute).WithPolling(time.Second).Should(BeTrue(), "%s is deleted", obj.GetName())
	}
}

// applyQuickstart applies examples/quickstart with its Provider pointed at endpoint.
func applyQuickstart(g Gomega, ctx context.Context, endpoint string) {
	applyQuickstartTo(g, ctx, env.Client, endpoint)
}

// applyQuickstartTo applies examples/quickstart through c.
func applyQuickstartTo(g Gomega, ctx context.Context, c client.Client, endpoint string) {
	files, err := filepath.Glob("../../examples/quickstart/*.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).NotTo(BeEmpty())
	for _, f := range files {
		raw, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		raw = []byte(strings.ReplaceAll(string(raw), quickstartEndpoint, endpoint))
		_, err = devenv.ApplyYAML(ctx, c, raw)
		g.Expect(err).NotTo(HaveOccurred(), f)
	}
}

func claimThroughModuleClass(g Gomega, ctx context.Context) *databasev1.PostgreSQLInstance {
	const adminNS, appNS = "terraplane-system", "team"
	g.Expect(env.Namespace(ctx, appNS)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "team-module"},
		Data: map[string]string{"main.tf": randomModule}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &terraformv1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "random"},
		Spec: terraformv1.ProviderConfigSpec{Source: "hashicorp/random", Version: "3.9.0"}})).To(Succeed())
	class := &terraformv1.ModuleClass{ObjectMeta: metav1.ObjectMeta{Namespace: adminNS, Name: "team-db"}, AllowedNamespaces: &common.AllowedNamespaces{Names: []string{appNS}}}
	class.SpecTemplate.ReclaimPolicy = common.ReclaimDelete
	class.SpecTemplate.Source = terraformv1.ModuleSource{ConfigMap: &terraformv1.ConfigMapSource{Name: "team-module"}}
	class.SpecTemplate.ProviderConfigRefs = []common.LocalReference{{Name: "random"}}
	class.SpecTemplate.ForProvider = &apiextensionsv1.JSON{Raw: []byte(`{"name": "team"}`)}
	g.Expect(env.Client.Create(ctx, class)).To(Succeed())
	g.Expect(env.Client.Create(ctx, &databasev1.PostgreSQLInstanceClass{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "team-db"},
		ClassRef: common.ClassReference{APIVersion: terraformv1.GroupVersion.String(), Kind: "ModuleClass", Name: "team-db", Namespace: adminNS}})).To(Succeed())
	claim := &databasev1.PostgreSQLInstance{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "db"}}
	claim.Spec.ClassRef = &common.LocalReference{Name: "team-db"}
	g.Expect(env.Client.Create(ctx, claim)).To(Succeed())
	waitReady(g, ctx, claim, func() []metav1.Condition { return claim.Status.Conditions })
	return claim
}

// waitReady waits until obj's Ready condition is True.
func waitReady(g Gomega, ctx context.Context, obj client.Object, conds func() []metav1.Condition) {
	waitReadyIn(g, ctx, env.Client, obj, conds)
}

// waitReadyIn waits until obj's Ready condition is True, reading it through c.
func waitReadyIn(g Gomega, ctx context.Context, c client.Client, obj client.Object, conds func() []metav1.Condition) {
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		ready := metav1.ConditionUnknown
		for _, c := range conds() {
			if c.Type == common.TypeReady {
				ready = c.Status
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
			}
		}
		g.Expect(ready).To(Equal(metav1.ConditionTrue))
	}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())
}

// By logs a step of a test.
func By(t *testing.T, step string) { t.Helper(); t.Log("STEP: " + step) }
